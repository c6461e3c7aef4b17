// SOFTMAX along the last axis. int8 input (int8 or int16 output) as TFLite's reference
// quantized Softmax: input differences from the row's maximum, scaled by β · s_in as a Q5.26
// fixed-point value (PreprocessSoftmaxScaling), gemmlowp's exp_on_negative_values summed in
// Q12.19, the sum's reciprocal (GetReciprocal), each exp times it rounded down to the
// output's 8 or 16 bits and offset by the type's minimum; differences below diff_min give
// the minimum. The output's quantization is fixed by TFLite: 1/256 and −128 for int8,
// zero point −32768 for int16. Float: exp((x − max) · β) / Σ.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/tflite/common.h"
#include "exec/tflite/fixed_point.h"
#include "exec/tflite/kernels.h"

namespace memledger::exec::tflite {
namespace {

constexpr int kScaledDiffIntegerBits = 5;
constexpr int kAccumulationIntegerBits = 12;

template <typename Out>
void softmax_int8(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const TensorQuant qi = input_quant(ctx, 0);
  const double beta = ctx.node.float_attr("beta", 1.0f);
  const double real = std::min<double>(beta * static_cast<double>(qi.scale) * (1 << (31 - kScaledDiffIntegerBits)),
                                       static_cast<double>((int64_t{1} << 31) - 1));
  const FixedPointMultiplier m = quantize_multiplier(real);
  const int left_shift = m.shift;  // QuantizeMultiplierGreaterThanOne: shift >= 0
  const double max_rescaled = 1.0 * ((1 << kScaledDiffIntegerBits) - 1) *
                              static_cast<double>(int64_t{1} << (31 - kScaledDiffIntegerBits)) /
                              static_cast<double>(int64_t{1} << left_shift);
  const auto diff_min = static_cast<int32_t>(-1.0 * std::floor(max_rescaled));
  const int64_t depth = x.shape.back();
  const int64_t rows = depth == 0 ? 0 : x.elements() / depth;
  const int8_t* px = x.as<int8_t>();
  Out* py = ctx.out().as<Out>();
  auto scaled_exp = [&](int32_t diff) {
    const int32_t rescaled = saturating_rounding_doubling_high_mul(diff * (1 << left_shift), m.multiplier);
    return exp_on_negative_values(rescaled, kScaledDiffIntegerBits);
  };
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* row = px + r * depth;
    int8_t max_in_row = std::numeric_limits<int8_t>::min();
    for (int64_t c = 0; c < depth; ++c) max_in_row = std::max(max_in_row, row[c]);
    int32_t sum_of_exps = 0;  // Q12.19
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = row[c] - max_in_row;
      if (diff >= diff_min) sum_of_exps += fp_rescale(scaled_exp(diff), 0, kAccumulationIntegerBits);
    }
    int num_bits_over_unit = 0;
    const int32_t shifted_scale = reciprocal(sum_of_exps, kAccumulationIntegerBits, &num_bits_over_unit);
    const int exponent = num_bits_over_unit + 31 - static_cast<int>(sizeof(Out) * 8);
    ML_CHECK(exponent >= 0 && exponent <= 31, "softmax exponent {}", exponent);
    constexpr int32_t lo = std::numeric_limits<Out>::min(), hi = std::numeric_limits<Out>::max();
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = row[c] - max_in_row;
      Out& y = py[r * depth + c];
      if (diff >= diff_min) {
        const int32_t unsat = rounding_divide_by_pot(fp_mul(shifted_scale, scaled_exp(diff)), exponent);
        y = static_cast<Out>(std::clamp(unsat + lo, lo, hi));
      } else {
        y = static_cast<Out>(lo);
      }
    }
  }
}

void softmax_float(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const float beta = ctx.node.float_attr("beta", 1.0f);
  const int64_t depth = x.shape.back();
  const int64_t rows = depth == 0 ? 0 : x.elements() / depth;
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  for (int64_t r = 0; r < rows; ++r) {
    float max = std::numeric_limits<float>::lowest();
    for (int64_t c = 0; c < depth; ++c) max = std::max(max, px[r * depth + c]);
    float sum = 0.0f;
    for (int64_t c = 0; c < depth; ++c) {
      const float e = std::exp((px[r * depth + c] - max) * beta);
      py[r * depth + c] = e;
      sum += e;
    }
    for (int64_t c = 0; c < depth; ++c) py[r * depth + c] /= sum;
  }
}

std::string check(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.outputs.empty()) return "needs an input and an output";
  const Value& x = g.value(n.inputs[0]);
  const Value& y = g.value(n.outputs[0]);
  if (x.shape != y.shape || x.shape.empty()) return "output shape must be the input's (rank 1 or more)";
  if (x.dtype == DType::kFloat32 && y.dtype == DType::kFloat32) return {};
  if (x.dtype != DType::kInt8 || (y.dtype != DType::kInt8 && y.dtype != DType::kInt16))
    return fmt::format("{} input, {} output (int8 to int8 or int16, or float32)", dtype_name(x.dtype),
                       dtype_name(y.dtype));
  if (auto why = check_per_tensor(g, n, 0, false); !why.empty()) return why;
  if (auto why = check_per_tensor(g, n, 0, true); !why.empty()) return why;
  const Quantization& q = *y.quant;
  if (y.dtype == DType::kInt8 && (q.zero_point() != -128 || q.scales[0] != 1.0f / 256))
    return "an int8 SOFTMAX output must have scale 1/256 and zero point -128";
  if (y.dtype == DType::kInt16 && q.zero_point() != -32768)
    return "an int16 SOFTMAX output must have zero point -32768";
  const double beta = n.float_attr("beta", 1.0f);
  if (!(beta * x.quant->scales[0] * (1 << (31 - kScaledDiffIntegerBits)) > 1.0)) return "β · input scale is too small";
  return {};
}

}  // namespace

void add_softmax_kernels(KernelTable& t) {
  t.emplace_back("tflite:SOFTMAX", Kernel{check, [](KernelContext& ctx) {
                                            if (ctx.in(0).dtype == DType::kFloat32)
                                              softmax_float(ctx);
                                            else if (ctx.out().dtype == DType::kInt16)
                                              softmax_int8<int16_t>(ctx);
                                            else
                                              softmax_int8<int8_t>(ctx);
                                          }});
}

}  // namespace memledger::exec::tflite
