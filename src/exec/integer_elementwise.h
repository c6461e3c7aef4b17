// The arithmetic of the integer elementwise operators, one element at a time: Add and Mul
// under either requantization rule, an activation's 256-entry table, a Concat input's
// requantization table, a pool's mean. The
// reference kernels (kernels_quantized_elementwise.cpp, kernels_quantized_conv.cpp's pools)
// and the fast set's own loops over either byte order (fast/kernels_integer_eltwise.cpp)
// compute through these, so the two give the same integers by construction.
//
// Add and Mul, kFloatScale (onnxruntime's QLinearAdd / QLinearMul, in float):
//   y = sat(round_half_even(s_a/s_y·(a − z_a) + s_b/s_y·(b − z_b)) + z_y)
//   y = sat(round_half_even(s_a·s_b/s_y·(a − z_a)(b − z_b)) + z_y)
// kFixedPoint (TFLite's int8 Add and Mul): Add left-shifts both operands by 20 bits and
// scales them by s/(2·max(s_a, s_b)), sums, and scales by 2·max/(2^20·s_y), each a Q31
// multiplier; Mul scales the product (a − z_a)(b − z_b) by s_a·s_b/s_y.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "quantized.h"

namespace memledger::exec {

// v rounded half to even, plus `zero`, saturated to `range` (an 8-bit type's): what
// std::nearbyint gives in the default rounding mode, without its library call (the build
// targets baseline x86-64, which has no rounding instruction), so a loop over it vectorizes.
// v is first clamped to ±2^22, where adding and subtracting 1.5·2^23 leaves it rounded to an
// integer: beyond that the result saturates either way (zero points lie within ±255). A NaN
// (an infinite multiplier times a zero difference) saturates low.
[[gnu::always_inline]] inline int32_t round_to_code(float v, int32_t zero, QuantRange range) {
  constexpr float kLimit = 4194304.0f;   // 2^22
  constexpr float kShift = 12582912.0f;  // 1.5 · 2^23
  v = v > -kLimit ? v : -kLimit;
  v = v < kLimit ? v : kLimit;
  const int32_t q = static_cast<int32_t>((v + kShift) - kShift) + zero;
  return q < range.lo ? range.lo : (q > range.hi ? range.hi : q);
}

// The same integers as scale_round_half_even_with_zero (requantize.h): the zero point joins
// v in float before the rounding, as the integer Conv and Gemm requantize.
[[gnu::always_inline]] inline int32_t round_with_zero_to_code(float v, int32_t zero, QuantRange range) {
  constexpr float kLimit = 4194304.0f;   // 2^22
  constexpr float kShift = 12582912.0f;  // 1.5 · 2^23
  v += static_cast<float>(zero);
  v = v > -kLimit ? v : -kLimit;
  v = v < kLimit ? v : kLimit;
  const int32_t q = static_cast<int32_t>((v + kShift) - kShift);
  return q < range.lo ? range.lo : (q > range.hi ? range.hi : q);
}

struct FloatScaleAdd {
  float ra, rb;  // s_a / s_y, s_b / s_y
  int32_t za, zb, zy;
  QuantRange range;
  [[gnu::always_inline]] int32_t operator()(int32_t a, int32_t b) const {
    return round_to_code(ra * static_cast<float>(a - za) + rb * static_cast<float>(b - zb), zy, range);
  }
};

struct FloatScaleMul {
  float m;  // s_a · s_b / s_y
  int32_t za, zb, zy;
  QuantRange range;
  [[gnu::always_inline]] int32_t operator()(int32_t a, int32_t b) const {
    return round_to_code(m * static_cast<float>((a - za) * (b - zb)), zy, range);
  }
};

struct FixedPointAdd {
  static constexpr int kLeftShift = 20;
  FixedPointMultiplier ma, mb, my;
  int32_t za, zb, zy;
  QuantRange range;
  [[gnu::always_inline]] int32_t operator()(int32_t a, int32_t b) const {
    const int32_t sa = multiply_by_quantized_multiplier((a - za) * (1 << kLeftShift), ma);
    const int32_t sb = multiply_by_quantized_multiplier((b - zb) * (1 << kLeftShift), mb);
    return saturate(static_cast<int64_t>(multiply_by_quantized_multiplier(sa + sb, my)) + zy, range);
  }
};

struct FixedPointMul {
  FixedPointMultiplier m;
  int32_t za, zb, zy;
  QuantRange range;
  [[gnu::always_inline]] int32_t operator()(int32_t a, int32_t b) const {
    return saturate(static_cast<int64_t>(multiply_by_quantized_multiplier((a - za) * (b - zb), m)) + zy, range);
  }
};

// Calls f(op) with the per-element functor of an integer Add (mul false) or Mul of operands
// quantized by a and b into y's parameters (range: the output type's) under `rule`.
template <typename F>
void with_integer_binary(bool mul, Requantization rule, const Quantization& a, const Quantization& b,
                         const Quantization& y, QuantRange range, F&& f) {
  const auto za = static_cast<int32_t>(a.zero_point()), zb = static_cast<int32_t>(b.zero_point());
  const auto zy = static_cast<int32_t>(y.zero_point());
  const float sa = a.scale(), sb = b.scale(), sy = y.scale();
  if (rule == Requantization::kFloatScale) {
    if (mul)
      f(FloatScaleMul{sa * sb / sy, za, zb, zy, range});
    else
      f(FloatScaleAdd{sa / sy, sb / sy, za, zb, zy, range});
    return;
  }
  if (mul) {
    f(FixedPointMul{quantize_multiplier(static_cast<double>(sa) * static_cast<double>(sb) / static_cast<double>(sy)),
                    za, zb, zy, range});
    return;
  }
  const double twice_max = 2.0 * std::max<double>(sa, sb);
  f(FixedPointAdd{quantize_multiplier(sa / twice_max), quantize_multiplier(sb / twice_max),
                  quantize_multiplier(twice_max / ((1 << FixedPointAdd::kLeftShift) * static_cast<double>(sy))), za, zb,
                  zy, range});
}

// The output byte of each input byte of a Concat input requantized into y's parameters
// (y = requantize(x − z_x) by s_x / s_y under `rule`), indexed by the input's raw byte: the
// reference kernel and the fast set's Concat both copy through it.
inline std::array<uint8_t, 256> requantize_bytes(Requantization rule, const Quantization& x, DType x_type,
                                                 const Quantization& y, DType y_type) {
  const Requantizer rq(rule, {real_multiplier(rule, x.scale(), 1.0f, y.scale())}, static_cast<int32_t>(y.zero_point()),
                       quant_range(y_type));
  const auto zx = static_cast<int32_t>(x.zero_point());
  std::array<uint8_t, 256> table{};
  for (int b = 0; b < 256; ++b) {
    const int32_t code = x_type == DType::kInt8 ? static_cast<int8_t>(static_cast<uint8_t>(b)) : b;
    const int32_t out = rq(code - zx);
    table[static_cast<size_t>(b)] =
        y_type == DType::kInt8 ? static_cast<uint8_t>(static_cast<int8_t>(out)) : static_cast<uint8_t>(out);
  }
  return table;
}

// The table of an integer activation node (Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid,
// HardSwish, Tanh): y = table[x − lo] for x's lowest value lo (quantized.h's
// activation_table of the node's float function; Clip's bounds read from ctx's inputs).
std::array<int32_t, 256> integer_activation_table(const KernelContext& ctx);
// The same table from the graph alone, for a node other than Clip (no inputs beyond x): the
// fast set builds it once, when it prepares the node.
std::array<int32_t, 256> integer_activation_table(const Graph& graph, const Node& node);

// Requantizes a pool window's sum of x − z_x over `count` positions (multiplier
// s_x / (s_y · count) by the graph's rule).
struct MeanQuant {
  int32_t x_zero;
  Requantization rule;
  float x_scale, y_scale;
  int32_t y_zero;
  QuantRange range;

  int32_t operator()(int32_t sum, int64_t count) const {
    const double m = rule == Requantization::kFloatScale
                         ? static_cast<double>(x_scale / (y_scale * static_cast<float>(count)))
                         : static_cast<double>(x_scale) / (static_cast<double>(y_scale) * static_cast<double>(count));
    int32_t v;
    if (rule == Requantization::kFloatScale)
      v = scale_round_half_even(sum, static_cast<float>(m));
    else
      v = multiply_by_quantized_multiplier(sum, quantize_multiplier(m));
    return saturate(static_cast<int64_t>(v) + y_zero, range);
  }
};

inline MeanQuant mean_quant(const KernelContext& ctx) {
  const Quantization& xq = input_quant(ctx, 0);
  const Quantization& yq = output_quant(ctx);
  return {static_cast<int32_t>(xq.zero_point()), ctx.graph.requantization,         xq.scale(), yq.scale(),
          static_cast<int32_t>(yq.zero_point()), quant_range(ctx.outputs[0].dtype)};
}

}  // namespace memledger::exec
