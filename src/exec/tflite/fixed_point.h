// gemmlowp's fixed-point transcendental functions, the arithmetic TFLite's integer SOFTMAX,
// LOGISTIC and TANH are built on. A value is a raw int32 in Q(kIntBits).(31 − kIntBits); the
// functions below reproduce gemmlowp's bit for bit (the same polynomial, Newton steps and
// barrel shifter), because a TFLite runtime's outputs are exactly these integers.
#pragma once

#include <cstdint>
#include <limits>

#include "exec/requantize.h"

namespace memledger::exec::tflite {

// x · 2^exponent with rounding (exponent < 0) or saturation (exponent > 0).
inline int32_t saturating_rounding_multiply_by_pot(int32_t x, int exponent) {
  if (exponent < 0) return rounding_divide_by_pot(x, -exponent);
  if (exponent == 0) return x;
  const int32_t threshold = (int32_t{1} << (31 - exponent)) - 1;
  if (x > threshold) return std::numeric_limits<int32_t>::max();
  if (x < -threshold) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

// A fixed-point product: the integer bits add up (gemmlowp's operator*).
inline int32_t fp_mul(int32_t a, int32_t b) { return saturating_rounding_doubling_high_mul(a, b); }

// Changes a raw value from Q(src_bits) to Q(dst_bits) (gemmlowp's Rescale).
inline int32_t fp_rescale(int32_t x, int src_bits, int dst_bits) {
  return saturating_rounding_multiply_by_pot(x, src_bits - dst_bits);
}

// (a + b) / 2 rounded half away from zero.
inline int32_t rounding_half_sum(int32_t a, int32_t b) {
  const int64_t sum = static_cast<int64_t>(a) + b;
  return static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

inline constexpr int32_t kQ0One = std::numeric_limits<int32_t>::max();  // 1.0 in Q0.31 (saturated)

// exp(a) for a in [-1/4, 0), Q0.31 in and out: a Taylor expansion around -1/8.
int32_t exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a);
// exp(a) for a <= 0; `a` in Q(int_bits), the result in Q0.31.
int32_t exp_on_negative_values(int32_t a, int int_bits);
// 1 / (1 + a) and (1 − a) / (1 + a) for a in (0, 1), Q0.31 (Newton–Raphson division).
int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a);
int32_t one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t a);
// logistic(a) and tanh(a); `a` in Q(int_bits), the result in Q0.31.
int32_t logistic(int32_t a, int int_bits);
int32_t tanh(int32_t a, int int_bits);

// 1 / x for a positive x in Q(x_integer_digits): the result in Q0.31, scaled by
// 2^-num_bits_over_unit (TFLite's GetReciprocal).
int32_t reciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit);

}  // namespace memledger::exec::tflite
