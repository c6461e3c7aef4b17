// The requantization helpers against hand-computed values and against exact rationals.
#include "exec/requantize.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

namespace memledger::exec {
namespace {

TEST(Requantize, QuantizeMultiplierMatchesTflite) {
  EXPECT_EQ(quantize_multiplier(0.5), (FixedPointMultiplier{1 << 30, 0}));
  EXPECT_EQ(quantize_multiplier(0.25), (FixedPointMultiplier{1 << 30, -1}));
  EXPECT_EQ(quantize_multiplier(1.0), (FixedPointMultiplier{1 << 30, 1}));
  EXPECT_EQ(quantize_multiplier(0.0), (FixedPointMultiplier{}));
  EXPECT_EQ(quantize_multiplier(1e-12), (FixedPointMultiplier{}));  // shift below -31
  // 0.75 = 0.75 · 2^0: q = round(0.75 · 2^31).
  EXPECT_EQ(quantize_multiplier(0.75), (FixedPointMultiplier{1610612736, 0}));
  // A mantissa that rounds up to 2^31 moves into the next power of two.
  EXPECT_EQ(quantize_multiplier(std::nextafter(1.0, 0.0)), (FixedPointMultiplier{1 << 30, 1}));
}

TEST(Requantize, GemmlowpHelpersRoundAsGemmlowpDoes) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min(), kMax = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(saturating_rounding_doubling_high_mul(kMin, kMin), kMax);
  EXPECT_EQ(saturating_rounding_doubling_high_mul(1 << 30, 1 << 30), 1 << 29);
  EXPECT_EQ(rounding_divide_by_pot(5, 1), 3);
  EXPECT_EQ(rounding_divide_by_pot(-5, 1), -3);
  EXPECT_EQ(rounding_divide_by_pot(4, 1), 2);
  EXPECT_EQ(rounding_divide_by_pot(-6, 2), -2);  // -1.5 → -2
  EXPECT_EQ(rounding_divide_by_pot(7, 0), 7);
  EXPECT_EQ(multiply_by_quantized_multiplier(3, quantize_multiplier(0.5)), 2);
  // The doubling high multiply's nudge rounds a negative half toward +∞ (gemmlowp's own
  // behaviour): -1.5 → -1; the power-of-two division rounds it away from zero.
  EXPECT_EQ(multiply_by_quantized_multiplier(-3, quantize_multiplier(0.5)), -1);
  EXPECT_EQ(multiply_by_quantized_multiplier(-6, quantize_multiplier(0.25)), -2);
  EXPECT_EQ(multiply_by_quantized_multiplier(100, quantize_multiplier(3.0)), 300);  // left shift
}

// Two roundings (the high multiply, then the shift) put the result within 3/4 of the
// exact product, not 1/2.
TEST(Requantize, FixedPointIsWithinThreeQuartersOfTheExactProduct) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> mult(1e-6, 4.0);
  std::uniform_int_distribution<int32_t> acc(-(1 << 20), 1 << 20);
  for (int i = 0; i < 20000; ++i) {
    const double m = mult(rng);
    const int32_t x = acc(rng);
    const double exact = static_cast<double>(x) * m;
    const int32_t got = multiply_by_quantized_multiplier(x, quantize_multiplier(m));
    ASSERT_LE(std::abs(static_cast<double>(got) - exact), 0.75 + 1e-6 * std::abs(exact) + 1e-3)
        << "x=" << x << " m=" << m;
  }
}

TEST(Requantize, FloatScaleRoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(scale_round_half_even(5, 0.5f), 2);
  EXPECT_EQ(scale_round_half_even(7, 0.5f), 4);
  EXPECT_EQ(scale_round_half_even(-5, 0.5f), -2);
  const Requantizer r(Requantization::kFloatScale, {0.5, 0.25}, 10, {-128, 127});
  EXPECT_EQ(r(5, 0), 12);
  EXPECT_EQ(r(6, 1), 12);  // 1.5 → 2
  EXPECT_EQ(r(1000, 0), 127);
  EXPECT_EQ(r(-1000, 1), -128);
  const Requantizer u(Requantization::kFixedPoint, {0.5}, 3, {0, 255});
  EXPECT_EQ(u(5, 0), 6);  // 2.5 → 3, + 3
  EXPECT_EQ(u(-100, 0), 0);
  EXPECT_EQ(u(1000, 7), 255);  // one multiplier serves every channel
}

TEST(Requantize, RealMultiplierFollowsEachRulesArithmetic) {
  const float a = 0.0123f, b = 0.0456f, c = 0.0789f;
  EXPECT_EQ(real_multiplier(Requantization::kFloatScale, a, b, c), static_cast<double>(a * b / c));
  EXPECT_EQ(real_multiplier(Requantization::kFixedPoint, a, b, c),
            static_cast<double>(a) * static_cast<double>(b) / static_cast<double>(c));
  EXPECT_EQ(quantize_value(Requantization::kFloatScale, 2.5f, 1.0f, 0, {-128, 127}), 2);
  EXPECT_EQ(quantize_value(Requantization::kFixedPoint, 2.5f, 1.0f, 0, {-128, 127}), 3);
  EXPECT_EQ(quantize_value(Requantization::kFloatScale, 1e9f, 1.0f, 0, {0, 255}), 255);
}

}  // namespace
}  // namespace memledger::exec
