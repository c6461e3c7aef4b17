// Range checks for numeric options that CLI11's own validators let through: NaN passes
// "non-negative" (every comparison with it is false) and turned verification off.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

namespace memledger::cli {

// A finite number >= 0 (not NaN, not infinite).
inline CLI::Validator finite_non_negative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "'" + text + "' is not a number";
        if (!std::isfinite(v) || v < 0) return "'" + text + "' is not a finite number >= 0";
        return {};
      },
      "FINITE >= 0");
}

// An unsigned seed written without a sign: "-1" would wrap to 2^64 - 1.
inline CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
          return "'" + text + "' is not an integer >= 0";
        return {};
      },
      "UINT");
}

}  // namespace memledger::cli
