// Checked size arithmetic. Sizes come from files; a size that overflows is a user error,
// never a wrap-around. `what` names the quantity so the message says where it went wrong.
#pragma once

#include <cstdint>
#include <string_view>

#include "memledger/core/error.h"

namespace memledger {

inline int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail("{}: size overflows 64 bits ({} + {})", what, a, b);
  return r;
}

inline int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail("{}: size overflows 64 bits ({} × {})", what, a, b);
  return r;
}

// ceil(a / b) for a >= 0, b > 0.
inline int64_t ceil_div(int64_t a, int64_t b) {
  ML_CHECK(a >= 0 && b > 0, "ceil_div({}, {})", a, b);
  return a / b + (a % b != 0 ? 1 : 0);
}

// The smallest multiple of `alignment` (> 0) that is >= value (>= 0).
inline int64_t align_up(int64_t value, int64_t alignment, std::string_view what) {
  ML_CHECK(value >= 0 && alignment > 0, "align_up({}, {})", value, alignment);
  return checked_mul(ceil_div(value, alignment), alignment, what);
}

}  // namespace memledger
