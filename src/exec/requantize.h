// Requantization: how an integer operator turns its int32 accumulator into the output's
// integers, one rule per model source (Graph::requantization, ir/quantization.h).
//
// kFloatScale (onnxruntime, ONNX models): the real multiplier m = s_in · s_w / s_out in
// float (left to right, as QLinearConv computes it), acc · m + the output zero point in
// float, rounded half to even, saturated to the output type. The zero point joins before the
// rounding, as oneDNN's int8 convolution adds it, so the fast int8 Conv and Gemm give these
// very integers. Against onnxruntime's QDQ model (DQ, a float op, Q; the int8 corpus's
// reference) neither order is exact (its float Conv lands a near-tie either way now and then):
// rounding first left mobilenet_v3_small at 99.6 % within one LSB (two at most), this order
// gives it 100 % and mobilenet_v3_large 99.7 % (100 % before); the corpus's nine others 100 %.
// kFixedPoint (TFLite, .tflite models): m as a Q31 multiplier and a power-of-two shift
// (QuantizeMultiplier), then SaturatingRoundingDoublingHighMul and RoundingDivideByPOT
// (gemmlowp's fixed-point helpers, TFLite's MultiplyByQuantizedMultiplier without
// TFLITE_SINGLE_ROUNDING), plus the zero point, clamped.
//
// The fixed-point helpers are free functions so the TFLite kernels can use them as TFLite
// writes its own kernels; Requantizer wraps both rules behind one call per channel.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "memledger/ir/quantization.h"

namespace memledger::exec {

// ---- TFLite / gemmlowp fixed point ----

// A real multiplier as q · 2^(shift − 31) with q in [2^30, 2^31) (or 0): TFLite's
// QuantizeMultiplier. shift > 0 is a left shift. Multipliers below 2^-31 become 0.
struct FixedPointMultiplier {
  int32_t multiplier = 0;
  int shift = 0;
  bool operator==(const FixedPointMultiplier&) const = default;
};
FixedPointMultiplier quantize_multiplier(double real_multiplier);

// The high 32 bits of the doubled product a · b · 2, rounded to nearest by a nudge of 2^30
// (a negative half goes toward +∞, as in gemmlowp), the int64 division truncating;
// INT32_MIN · INT32_MIN saturates to INT32_MAX. gemmlowp's SaturatingRoundingDoublingHighMul.
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

// x / 2^exponent rounded half away from zero (exponent in [0, 31]): gemmlowp's
// RoundingDivideByPOT.
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// x · multiplier · 2^(shift − 31): TFLite's MultiplyByQuantizedMultiplier (the left shift
// before the high multiply, the right shift after it: two roundings, within 3/4 of the
// exact product). The left-shifted x saturates to int32 where TFLite's would overflow.
inline int32_t multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const int64_t shifted = static_cast<int64_t>(x) * (int64_t{1} << left);
  const auto clamped = static_cast<int32_t>(
      std::clamp<int64_t>(shifted, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
  return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(clamped, multiplier), right);
}
inline int32_t multiply_by_quantized_multiplier(int32_t x, FixedPointMultiplier m) {
  return multiply_by_quantized_multiplier(x, m.multiplier, m.shift);
}

// ---- onnxruntime float scale ----

// The real multiplier s_in · s_w / s_out as each rule computes it: in float, left to right,
// for kFloatScale (onnxruntime's QLinearConv), in double for kFixedPoint (TFLite's
// PopulateConvolutionQuantizationParams).
inline double real_multiplier(Requantization rule, float s_in, float s_w, float s_out) {
  if (rule == Requantization::kFloatScale) return static_cast<double>(s_in * s_w / s_out);
  return static_cast<double>(s_in) * static_cast<double>(s_w) / static_cast<double>(s_out);
}

// acc · scale in float rounded half to even, as an int32 (saturated to int32's range).
inline int32_t scale_round_half_even(int32_t acc, float scale) {
  const float v = static_cast<float>(acc) * scale;
  const float r = std::nearbyint(v);  // the default rounding mode: half to even
  if (!(r > -2147483648.0f)) return std::numeric_limits<int32_t>::min();
  if (!(r < 2147483648.0f)) return std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(r);
}

// acc · scale + zero point in float, rounded half to even (the kFloatScale rule above).
inline int64_t scale_round_half_even_with_zero(int32_t acc, float scale, int32_t zero_point) {
  const float v = static_cast<float>(acc) * scale + static_cast<float>(zero_point);
  const float r = std::nearbyint(v);
  if (!(r > -2147483648.0f)) return std::numeric_limits<int32_t>::min();
  if (!(r < 2147483648.0f)) return std::numeric_limits<int32_t>::max();
  return static_cast<int64_t>(r);
}

// The integer range of an 8-bit (or other integer) quantized type.
struct QuantRange {
  int32_t lo = -128, hi = 127;
};
inline int32_t saturate(int64_t v, QuantRange r) { return static_cast<int32_t>(std::clamp<int64_t>(v, r.lo, r.hi)); }

// One rule, one multiplier per output channel (or one for the tensor): requantize(acc, c)
// is the output integer for accumulator `acc` of channel c, zero point added and saturated.
class Requantizer {
 public:
  Requantizer() = default;
  // multipliers[c] = s_in · s_w[c] / s_out; for kFloatScale computed in float as the
  // caller gives it, for kFixedPoint from the same value (in double) by quantize_multiplier.
  Requantizer(Requantization rule, const std::vector<double>& multipliers, int32_t zero_point, QuantRange range);

  int32_t operator()(int32_t acc, size_t channel = 0) const {
    const size_t c = float_scales_.size() == 1 || fixed_.size() == 1 ? 0 : channel;
    int64_t v;
    if (rule_ == Requantization::kFloatScale)
      v = scale_round_half_even_with_zero(acc, float_scales_[c], zero_point_);
    else
      v = static_cast<int64_t>(multiply_by_quantized_multiplier(acc, fixed_[c])) + zero_point_;
    return saturate(v, range_);
  }
  Requantization rule() const { return rule_; }

 private:
  Requantization rule_ = Requantization::kFloatScale;
  std::vector<float> float_scales_;
  std::vector<FixedPointMultiplier> fixed_;
  int32_t zero_point_ = 0;
  QuantRange range_;
};

// A real value quantized by (scale, zero point) under `rule`'s rounding: float division
// rounded half to even (onnxruntime's QuantizeLinear) for kFloatScale, and TFLite's
// round half away from zero for kFixedPoint; saturated.
int32_t quantize_value(Requantization rule, float real, float scale, int32_t zero_point, QuantRange range);

}  // namespace memledger::exec
