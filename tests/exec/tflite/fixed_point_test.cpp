// gemmlowp's fixed-point functions as the TFLite kernels use them: exact at the points
// gemmlowp defines exactly, and within a few units of 2^-31 of the real function elsewhere.
#include "exec/tflite/fixed_point.h"

#include <gtest/gtest.h>

#include <cmath>

namespace memledger::exec::tflite {
namespace {

double q(int32_t raw, int int_bits) { return raw / std::ldexp(1.0, 31 - int_bits); }
int32_t raw(double x, int int_bits) { return static_cast<int32_t>(std::lround(std::ldexp(x, 31 - int_bits))); }

TEST(TfliteFixedPoint, ExactPoints) {
  EXPECT_EQ(exp_on_negative_values(0, 5), kQ0One);
  EXPECT_EQ(logistic(0, 4), int32_t{1} << 30);
  EXPECT_EQ(tanh(0, 4), 0);
  // 1/(1 + 0.5) = 2/3 in Q0.31.
  EXPECT_NEAR(q(one_over_one_plus_x_for_x_in_0_1(raw(0.5, 0)), 0), 2.0 / 3.0, 1e-8);
}

TEST(TfliteFixedPoint, ExpOnNegativeValuesFollowsExp) {
  for (int int_bits : {4, 5, 12}) {
    double worst = 0;
    for (double x = -15.9; x < 0; x += 0.0371) {
      const double got = q(exp_on_negative_values(raw(x, int_bits), int_bits), 0);
      worst = std::max(worst, std::abs(got - std::exp(x)));
    }
    // gemmlowp's polynomial is good to about 2e-7; the input's own resolution adds to it.
    EXPECT_LT(worst, 2e-7 + std::ldexp(1.0, int_bits - 31)) << int_bits << " integer bits";
  }
  // Past -32 (more than 5 integer bits) the result is 0.
  EXPECT_EQ(exp_on_negative_values(raw(-40.0, 6), 6), 0);
}

TEST(TfliteFixedPoint, LogisticAndTanhFollowTheRealFunctions) {
  double worst_logistic = 0, worst_tanh = 0;
  for (double x = -7.9; x < 7.9; x += 0.0173) {
    worst_logistic = std::max(worst_logistic, std::abs(q(logistic(raw(x, 4), 4), 0) - 1 / (1 + std::exp(-x))));
    worst_tanh = std::max(worst_tanh, std::abs(q(tanh(raw(x, 4), 4), 0) - std::tanh(x)));
  }
  EXPECT_LT(worst_logistic, 3e-7);
  EXPECT_LT(worst_tanh, 3e-7);
  // Odd and complementary symmetry hold exactly up to the last bit.
  for (double x : {0.25, 1.5, 3.75}) {
    EXPECT_EQ(tanh(raw(-x, 4), 4), -tanh(raw(x, 4), 4));
    EXPECT_EQ(logistic(raw(-x, 4), 4), kQ0One - logistic(raw(x, 4), 4));
  }
}

TEST(TfliteFixedPoint, ReciprocalScalesByItsExponent) {
  for (double s : {1.0, 1.25, 3.0, 17.5, 1000.0}) {
    int bits = 0;
    const int32_t r = reciprocal(raw(s, 12), 12, &bits);
    EXPECT_NEAR(q(r, 0) / std::ldexp(1.0, bits), 1.0 / s, 1e-7 / s) << s;
  }
}

}  // namespace
}  // namespace memledger::exec::tflite
