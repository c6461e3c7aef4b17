// Library errors name the value they refuse, never a command-line flag (issue 34, item 4):
// the command that read the value from a flag adds the flag's name here, so the message the
// user sees reads "--patch '4x4': expected ...".
#pragma once

#include <string_view>
#include <utility>

#include "memledger/core/error.h"

namespace memledger::cli {

// run(), with an Error's message prefixed by `flag` and `separator` (its exit code and
// option kept: Error::in_context).
template <typename Run>
auto with_flag(std::string_view flag, std::string_view separator, Run&& run) {
  try {
    return std::forward<Run>(run)();
  } catch (const Error& e) {
    throw e.in_context(flag, separator);
  }
}

// A value parsed from a flag: "--patch '4x4': expected ...".
template <typename Parse>
auto parse_flag(std::string_view flag, Parse&& parse) {
  return with_flag(flag, " ", std::forward<Parse>(parse));
}

// What a flag asks the library to produce: "--emit-c: buffer 'x' at offset ... does not fit ...".
template <typename Make>
auto for_flag(std::string_view flag, Make&& make) {
  return with_flag(flag, ": ", std::forward<Make>(make));
}

// The command-line flag a library option comes from (ErrorOption), or empty.
std::string_view flag_of(ErrorOption option);

}  // namespace memledger::cli
