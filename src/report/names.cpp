#include "names.h"

#include <algorithm>

#include "memledger/core/text.h"

namespace memledger::report {
namespace {

bool starts_glyph(char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }

}  // namespace

size_t glyphs(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), starts_glyph));
}

std::string shorten(const std::string& name, size_t width) {
  if (glyphs(name) <= width || width < 3) return name;
  if (glyphs(name) == name.size()) {
    const size_t head = (width - 1) * 2 / 5;
    return name.substr(0, head) + "…" + name.substr(name.size() - (width - 1 - head));
  }
  std::string out;
  size_t used = 0;
  for (char c : name) {
    if (starts_glyph(c) && ++used == width) break;
    out += c;
  }
  return out + "…";
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : escape_non_utf8(text)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace memledger::report
