// Library errors name the value they refuse, never a command-line flag (issue 34, item 4):
// the command that read the value from a flag adds the flag's name here, so the message the
// user sees reads "--patch '4x4': expected ...".
#pragma once

#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "memledger/core/error.h"

namespace memledger::cli {

// parse(), with an Error's message prefixed by `flag`.
template <typename Parse>
auto parse_flag(std::string_view flag, Parse&& parse) {
  try {
    return std::forward<Parse>(parse)();
  } catch (const Error& e) {
    throw Error(fmt::format("{} {}", flag, e.what()), e.code());
  }
}

// make(), with an Error's message prefixed by `flag` and a colon: for what a flag asks the
// library to produce ("--emit-c: buffer 'x' at offset ... does not fit ...").
template <typename Make>
auto for_flag(std::string_view flag, Make&& make) {
  try {
    return std::forward<Make>(make)();
  } catch (const Error& e) {
    throw e.in_context(flag);
  }
}

// The command-line flag a library option comes from (ErrorOption), or empty.
std::string_view flag_of(ErrorOption option);

}  // namespace memledger::cli
