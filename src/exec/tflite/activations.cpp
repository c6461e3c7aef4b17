// RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH and HARD_SWISH, element by element (so they
// may write over their input). int8 as TFLite's reference kernels compute them:
// - RELU*: (x − zp_in) rescaled by s_in / s_out (MultiplyByQuantizedMultiplier), plus zp_out,
//   clamped to the activation's range on the output scale.
// - LOGISTIC / TANH: the input as Q4.27 (a multiplier s_in · 2^27 split by frexp), gemmlowp's
//   fixed-point logistic / tanh, rounded down to Q0.7 / Q0.8; inputs past the input radius
//   saturate. The output must be scale 1/256, zero point −128 (LOGISTIC) or 1/128, 0 (TANH).
// - HARD_SWISH: TFLite's 16-bit fixed-point evaluation of x · relu6(x + 3) / 6.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/tflite/common.h"
#include "exec/tflite/fixed_point.h"
#include "exec/tflite/kernels.h"

namespace memledger::exec::tflite {
namespace {

enum class Act { kRelu, kRelu6, kReluN1To1, kLogistic, kTanh, kHardSwish };

float float_act(Act a, float x) {
  switch (a) {
    case Act::kRelu:
      return std::max(0.0f, x);
    case Act::kRelu6:
      return std::min(6.0f, std::max(0.0f, x));
    case Act::kReluN1To1:
      return std::min(1.0f, std::max(-1.0f, x));
    case Act::kLogistic:
      return 1.0f / (1.0f + std::exp(-x));
    case Act::kTanh:
      return std::tanh(x);
    case Act::kHardSwish:
      return x * std::min(6.0f, std::max(0.0f, x + 3.0f)) / 6.0f;
  }
  return x;
}

void relu_int8(KernelContext& ctx, Act a) {
  const TensorQuant qi = input_quant(ctx, 0), qo = output_quant(ctx);
  const FixedPointMultiplier m = quantize_multiplier(static_cast<double>(qi.scale) / static_cast<double>(qo.scale));
  const char* name = a == Act::kRelu ? "RELU" : a == Act::kRelu6 ? "RELU6" : "RELU_N1_TO_1";
  const QuantRange range = activation_range(name, qo, DType::kInt8);
  const int8_t* x = ctx.in(0).as<int8_t>();
  int8_t* y = ctx.out().as<int8_t>();
  const int64_t n = ctx.in(0).elements();
  for (int64_t i = 0; i < n; ++i)
    y[i] = clamp_to<int8_t>(qo.zero_point + multiply_by_quantized_multiplier(x[i] - qi.zero_point, m), range);
}

// The largest |x − zp| whose fixed-point evaluation does not saturate (CalculateInputRadius).
int32_t input_radius(int integer_bits, int left_shift) {
  const double max_rescaled = 1.0 * ((1 << integer_bits) - 1) * static_cast<double>(int64_t{1} << (31 - integer_bits)) /
                              static_cast<double>(int64_t{1} << left_shift);
  return static_cast<int32_t>(std::floor(max_rescaled));
}

void sigmoid_int8(KernelContext& ctx, bool is_tanh) {
  constexpr int kInputIntegerBits = 4;
  const TensorQuant qi = input_quant(ctx, 0);
  const double real = static_cast<double>(qi.scale) * static_cast<double>(1 << (31 - kInputIntegerBits));
  int left_shift = 0;
  const double q = std::frexp(real, &left_shift);
  const auto multiplier = static_cast<int32_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  const int32_t radius = input_radius(kInputIntegerBits, left_shift);
  const int8_t* x = ctx.in(0).as<int8_t>();
  int8_t* y = ctx.out().as<int8_t>();
  const int64_t n = ctx.in(0).elements();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = x[i] - qi.zero_point;
    if (v <= -radius) {
      y[i] = std::numeric_limits<int8_t>::min();
    } else if (v >= radius) {
      y[i] = std::numeric_limits<int8_t>::max();
    } else {
      const int32_t in_q4 = multiply_by_quantized_multiplier(v, multiplier, left_shift);
      const QuantRange r = type_range(DType::kInt8);
      if (is_tanh) {
        const int32_t out = rounding_divide_by_pot(tanh(in_q4, kInputIntegerBits), 31 - 7);
        y[i] = clamp_to<int8_t>(out, r);
      } else {
        const int32_t out = rounding_divide_by_pot(logistic(in_q4, kInputIntegerBits), 31 - 8) - 128;
        y[i] = clamp_to<int8_t>(out, r);
      }
    }
  }
}

// gemmlowp's 16-bit SaturatingRoundingDoublingHighMul and TFLite's truncating variant.
int16_t srdhm16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  const int32_t ab = static_cast<int32_t>(a) * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}
int16_t sdhm16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((static_cast<int32_t>(a) * b) / (1 << 15));
}
int16_t saturating_left_shift16(int16_t v, int amount) {
  const int64_t r = static_cast<int64_t>(v) * (int64_t{1} << amount);
  return static_cast<int16_t>(std::clamp<int64_t>(r, -32768, 32767));
}
// TFLite's DownScaleInt32ToInt16Multiplier.
int16_t downscale_multiplier(int32_t m) {
  constexpr int32_t kRounding = 1 << 15;
  if (m >= std::numeric_limits<int32_t>::max() - kRounding) return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((m + kRounding) >> 16);
}

void hard_swish_int8(KernelContext& ctx) {
  const TensorQuant qi = input_quant(ctx, 0), qo = output_quant(ctx);
  const float hires_input_scale = (1.0f / 128.0f) * qi.scale;
  const float reluish_scale = 3.0f / 32768.0f;
  const FixedPointMultiplier out_m = quantize_multiplier(static_cast<double>(hires_input_scale / qo.scale));
  const FixedPointMultiplier relu_m = quantize_multiplier(static_cast<double>(hires_input_scale / reluish_scale));
  const int16_t out_m16 = downscale_multiplier(out_m.multiplier);
  const int16_t relu_m16 = downscale_multiplier(relu_m.multiplier);
  const int8_t* x = ctx.in(0).as<int8_t>();
  int8_t* y = ctx.out().as<int8_t>();
  const int64_t n = ctx.in(0).elements();
  for (int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<int16_t>(x[i] - qi.zero_point);
    const auto hires = static_cast<int16_t>(v * (1 << 7));
    const int16_t preshift_out = srdhm16(hires, out_m16);
    int16_t reluish = hires;
    if (relu_m.shift > 0) reluish = saturating_left_shift16(reluish, relu_m.shift - 1);
    reluish = srdhm16(reluish, relu_m16);
    if (relu_m.shift > 0) reluish = saturating_left_shift16(reluish, 1);
    if (relu_m.shift < 0) reluish = static_cast<int16_t>(rounding_divide_by_pot(reluish, -relu_m.shift));
    reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);
    const int16_t preshift = sdhm16(reluish, preshift_out);
    auto out = static_cast<int16_t>(rounding_divide_by_pot(preshift, -out_m.shift));
    out = static_cast<int16_t>(out + qo.zero_point);
    y[i] = static_cast<int8_t>(std::clamp<int16_t>(out, -128, 127));
  }
}

template <Act kAct>
void run(KernelContext& ctx) {
  if (ctx.in(0).dtype == DType::kFloat32) {
    const float* x = ctx.in(0).as<float>();
    float* y = ctx.out().as<float>();
    const int64_t n = ctx.in(0).elements();
    for (int64_t i = 0; i < n; ++i) y[i] = float_act(kAct, x[i]);
    return;
  }
  if constexpr (kAct == Act::kLogistic || kAct == Act::kTanh)
    sigmoid_int8(ctx, kAct == Act::kTanh);
  else if constexpr (kAct == Act::kHardSwish)
    hard_swish_int8(ctx);
  else
    relu_int8(ctx, kAct);
}

template <Act kAct>
std::string check(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.outputs.empty()) return "needs an input and an output";
  const Value& x = g.value(n.inputs[0]);
  const Value& y = g.value(n.outputs[0]);
  if (x.shape != y.shape) return "output shape differs from the input's";
  if (x.dtype != y.dtype) return "output type differs from the input's";
  if (x.dtype == DType::kFloat32) return {};
  if (x.dtype != DType::kInt8) return fmt::format("{} input (int8 or float32 expected)", dtype_name(x.dtype));
  if (auto why = check_per_tensor(g, n, 0, false); !why.empty()) return why;
  if (auto why = check_per_tensor(g, n, 0, true); !why.empty()) return why;
  const Quantization& q = *y.quant;
  // The fixed-point result is on the scale 1/256 (LOGISTIC) or 1/128 (TANH) whatever the
  // output declares; TFLite checks the zero point only.
  if (kAct == Act::kLogistic && q.zero_point() != -128) return "an int8 LOGISTIC's output zero point must be -128";
  if (kAct == Act::kTanh && q.zero_point() != 0) return "an int8 TANH's output zero point must be 0";
  if (kAct == Act::kHardSwish) {
    const float hires = (1.0f / 128.0f) * x.quant->scales[0];
    if (quantize_multiplier(static_cast<double>(hires / q.scales[0])).shift > 0)
      return "an int8 HARD_SWISH needs s_in / 128 / s_out below 1";
  }
  return {};
}

}  // namespace

void add_activation_kernels(KernelTable& t) {
  t.emplace_back("tflite:RELU", Kernel{check<Act::kRelu>, run<Act::kRelu>});
  t.emplace_back("tflite:RELU6", Kernel{check<Act::kRelu6>, run<Act::kRelu6>});
  t.emplace_back("tflite:RELU_N1_TO_1", Kernel{check<Act::kReluN1To1>, run<Act::kReluN1To1>});
  t.emplace_back("tflite:LOGISTIC", Kernel{check<Act::kLogistic>, run<Act::kLogistic>});
  t.emplace_back("tflite:TANH", Kernel{check<Act::kTanh>, run<Act::kTanh>});
  t.emplace_back("tflite:HARD_SWISH", Kernel{check<Act::kHardSwish>, run<Act::kHardSwish>});
}

}  // namespace memledger::exec::tflite
