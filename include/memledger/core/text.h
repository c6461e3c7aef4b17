// Text that comes from files: names in a model may hold any bytes. JSON needs UTF-8, and a
// terminal obeys escape sequences, so names are checked at import and escaped when printed.
#pragma once

#include <string>
#include <string_view>

namespace memledger {

// True when `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// The one rule for bytes that are not UTF-8, in every writer (text, JSON, HTML, C header):
// each byte that is not part of a well-formed UTF-8 sequence is written as \xNN (lower-case
// hex); everything else is kept. A file name holding the byte 0xFF after "m" reads m\xff.onnx
// everywhere.
std::string escape_non_utf8(std::string_view text);

// `text` with control characters (C0, DEL, C1) and bytes that are not UTF-8 written as
// \xNN (the rule of escape_non_utf8, extended to controls), so a name cannot move the
// cursor, retitle the window or change colours.
// With `keep_line_breaks`, '\n' is kept (for whole reports printed at once).
std::string escape_for_terminal(std::string_view text, bool keep_line_breaks = false);

}  // namespace memledger
