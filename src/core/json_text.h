// JSON text of a report whose strings may hold any bytes. Names and paths come from files
// and the command line (a Linux file name may hold 0xFF); JSON must be UTF-8, and
// nlohmann::json refuses to write anything else. Every JSON writer goes through json_text,
// which escapes each string (keys too) by the one rule of core/text.h (escape_non_utf8), so
// a name reads the same in JSON as in the text report and on the terminal. Header-only, so
// core itself does not link nlohmann::json; the stages that write JSON do.
#pragma once

#include <string>
#include <utility>

#include "memledger/core/text.h"

namespace memledger {

template <typename Json>
void escape_json_strings(Json& j) {
  if (j.is_string()) {
    const auto& s = j.template get_ref<const typename Json::string_t&>();
    if (!is_valid_utf8(s)) j = escape_non_utf8(s);
  } else if (j.is_array()) {
    for (auto& element : j) escape_json_strings(element);
  } else if (j.is_object()) {
    bool keys_valid = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      escape_json_strings(it.value());
      keys_valid = keys_valid && is_valid_utf8(it.key());
    }
    if (!keys_valid) {
      Json escaped = Json::object();
      for (auto it = j.begin(); it != j.end(); ++it) escaped[escape_non_utf8(it.key())] = std::move(it.value());
      j = std::move(escaped);
    }
  }
}

// j.dump(indent) with every string made UTF-8 first.
template <typename Json>
std::string json_text(Json j, int indent = 2) {
  escape_json_strings(j);
  return j.dump(indent);
}

}  // namespace memledger
