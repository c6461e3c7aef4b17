// How reports show names: cut to a width (a terminal column, the room inside an SVG
// rectangle) and escaped for HTML and SVG. One copy for the text and the HTML reports.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace memledger::report {

// Characters of UTF-8 text as a terminal or a browser lays them out (one per code point:
// the names and labels of our reports have no wide or combining characters).
size_t glyphs(std::string_view text);

// `name` cut to `width` characters, the cut marked "…". ASCII names lose their middle,
// where exported names repeat their path ("/layer1/layer1.0/conv1/Conv_output_0" at 24 →
// "/layer1/l…/Conv_output_0"); other names lose their end, cut on a character
// boundary. Widths under 3 leave the name whole.
std::string shorten(const std::string& name, size_t width);

// Text for HTML and SVG content and attribute values: & < > " ' as entities, bytes that
// are not UTF-8 as \\xNN (core/text.h).
std::string escape(std::string_view text);

}  // namespace memledger::report
