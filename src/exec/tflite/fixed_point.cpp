// gemmlowp's fixed-point functions (see fixed_point.h), scalar int32 only.
#include "exec/tflite/fixed_point.h"

#include <bit>

namespace memledger::exec::tflite {

int32_t exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a) {
  const int32_t constant_term = 1895147668;     // exp(-1/8) in Q0.31
  const int32_t constant_1_over_3 = 715827883;  // 1/3
  const int32_t x = a + (int32_t{1} << 28);     // a + 1/8
  const int32_t x2 = fp_mul(x, x);
  const int32_t x3 = fp_mul(x2, x);
  const int32_t x4 = fp_mul(x2, x2);
  const int32_t x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2);
  const int32_t poly = saturating_rounding_multiply_by_pot(fp_mul(x4_over_4 + x3, constant_1_over_3) + x2, -1);
  return constant_term + fp_mul(constant_term, x + poly);
}

int32_t exp_on_negative_values(int32_t a, int int_bits) {
  const int fractional_bits = 31 - int_bits;
  const int32_t one_quarter = int32_t{1} << (fractional_bits - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter;
  int32_t result =
      exp_on_interval_between_negative_one_quarter_and_0_excl(fp_rescale(a_mod_quarter_minus_one_quarter, int_bits, 0));
  const int32_t remainder = a_mod_quarter_minus_one_quarter - a;
  // exp(-2^e) for e = -2 .. 4 in Q0.31: multiplied in for every bit of the remainder.
  constexpr struct {
    int exponent;
    int32_t multiplier;
  } kBarrel[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                 {2, 39332535},    {3, 720401},      {4, 242}};
  for (const auto& step : kBarrel) {
    if (int_bits > step.exponent) {
      const int shift = fractional_bits + step.exponent;
      if (remainder & (int32_t{1} << shift)) result = fp_mul(result, step.multiplier);
    }
  }
  if (int_bits > 5) {
    const int32_t clamp = -(int32_t{1} << (36 - int_bits));  // -32
    if (a < clamp) result = 0;
  }
  if (a == 0) result = kQ0One;
  return result;
}

namespace {

// The shared Newton–Raphson division of gemmlowp: x ≈ 1 / half_denominator in Q2.29.
int32_t newton_reciprocal_q2(int32_t half_denominator) {
  const int32_t constant_48_over_17 = 1515870810;  // Q2.29
  const int32_t constant_neg_32_over_17 = -1010580540;
  const int32_t q2_one = int32_t{1} << 29;
  int32_t x = constant_48_over_17 + fp_mul(half_denominator, constant_neg_32_over_17);
  for (int i = 0; i < 3; ++i) {
    const int32_t half_denominator_times_x = fp_mul(half_denominator, x);  // Q2
    const int32_t one_minus = q2_one - half_denominator_times_x;           // Q2
    x = x + fp_rescale(fp_mul(x, one_minus), 4, 2);                        // Q4 → Q2
  }
  return x;
}

}  // namespace

int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a) {
  const int32_t x = newton_reciprocal_q2(rounding_half_sum(a, kQ0One));
  return fp_rescale(x, 1, 0);  // ExactMulByPot<-1>: Q2 read as Q1, then to Q0
}

int32_t one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t a) {
  const int32_t x = newton_reciprocal_q2(rounding_half_sum(a, kQ0One));
  return fp_rescale(x - (int32_t{1} << 29), 2, 0);
}

int32_t logistic(int32_t a, int int_bits) {
  if (a == 0) return int32_t{1} << 30;  // one half
  const int32_t abs_a = a > 0 ? a : -a;
  const int32_t positive = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(-abs_a, int_bits));
  return a > 0 ? positive : kQ0One - positive;
}

int32_t tanh(int32_t a, int int_bits) {
  if (a == 0) return 0;
  const int32_t n = a < 0 ? a : -a;
  // exp(2n): ExactMulByPot<1> reads n as Q(int_bits + 1).
  const int32_t t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, int_bits + 1));
  return a < 0 ? -t : t;
}

int32_t reciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit) {
  const int headroom_plus_one = std::countl_zero(static_cast<uint32_t>(x));
  *num_bits_over_unit = x_integer_digits - headroom_plus_one;
  const auto shifted_sum_minus_one =
      static_cast<int32_t>((static_cast<uint32_t>(x) << headroom_plus_one) - (uint32_t{1} << 31));
  return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one);
}

}  // namespace memledger::exec::tflite
