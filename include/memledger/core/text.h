// Text that comes from files: names in a model may hold any bytes. JSON needs UTF-8, and a
// terminal obeys escape sequences, so names are checked at import and escaped when printed.
#pragma once

#include <string>
#include <string_view>

namespace memledger {

// True when `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// `text` with control characters (C0, DEL, C1) and bytes that are not UTF-8 written as
// \xNN, so a name cannot move the cursor, retitle the window or change colours.
// With `keep_line_breaks`, '\n' is kept (for whole reports printed at once).
std::string escape_for_terminal(std::string_view text, bool keep_line_breaks = false);

}  // namespace memledger
