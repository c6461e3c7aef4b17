// FULLY_CONNECTED: y[b, o] = Σ_i x[b, i] · w[o, i] + bias[o] over weights [O, I] as the file
// stores them; every leading axis of the input is a batch (TFLite flattens the input to
// [elements / I, I]; keep_num_dims only shapes the output, which the file declares). int8
// as TFLite's reference FullyConnected: (x − zp_x) · (w − zp_w) in int32, the bias,
// MultiplyByQuantizedMultiplier by s_x · s_w / s_out (one multiplier, or one per output
// row for per-channel weights), the output zero point, the fused activation's range.
#include <vector>

#include "exec/tflite/common.h"
#include "exec/tflite/kernels.h"

namespace memledger::exec::tflite {
namespace {

struct Dims {
  int64_t batches, depth, units;
};

Dims dims(const KernelContext& ctx) {
  const int64_t depth = ctx.in(1).shape[1];
  return {ctx.in(0).elements() / depth, depth, ctx.in(1).shape[0]};
}

void run_int8(KernelContext& ctx) {
  const Dims d = dims(ctx);
  const TensorQuant in_q = input_quant(ctx, 0);
  const TensorQuant out_q = output_quant(ctx);
  const Quantization& w_q = weight_quant(ctx.graph, ctx.node, 1);
  const bool per_channel = w_q.scales.size() > 1;
  std::vector<FixedPointMultiplier> multipliers;
  for (size_t o = 0; o < (per_channel ? w_q.scales.size() : 1); ++o)
    multipliers.push_back(
        quantize_multiplier(real_multiplier(Requantization::kFixedPoint, in_q.scale, w_q.scales[o], out_q.scale)));
  const auto filter_offset = static_cast<int32_t>(-(w_q.zero_points.empty() ? 0 : w_q.zero_points[0]));
  const QuantRange range = activation_range(fused_activation(ctx.node), out_q, DType::kInt8);
  const int8_t* x = ctx.in(0).as<int8_t>();
  const int8_t* w = ctx.in(1).as<int8_t>();
  const int32_t* bias = ctx.has_input(2) ? ctx.in(2).as<int32_t>() : nullptr;
  int8_t* y = ctx.out().as<int8_t>();
  for (int64_t b = 0; b < d.batches; ++b)
    for (int64_t o = 0; o < d.units; ++o) {
      int32_t acc = 0;
      for (int64_t i = 0; i < d.depth; ++i)
        acc += (static_cast<int32_t>(x[b * d.depth + i]) - in_q.zero_point) *
               (static_cast<int32_t>(w[o * d.depth + i]) + filter_offset);
      if (bias) acc += bias[o];
      acc = multiply_by_quantized_multiplier(acc, multipliers[per_channel ? static_cast<size_t>(o) : 0]) +
            out_q.zero_point;
      y[b * d.units + o] = clamp_to<int8_t>(acc, range);
    }
}

void run_float(KernelContext& ctx) {
  const Dims d = dims(ctx);
  const std::string act = fused_activation(ctx.node);
  const float* x = ctx.in(0).as<float>();
  const float* w = ctx.in(1).as<float>();
  const float* bias = ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr;
  float* y = ctx.out().as<float>();
  for (int64_t b = 0; b < d.batches; ++b)
    for (int64_t o = 0; o < d.units; ++o) {
      float acc = 0.0f;
      for (int64_t i = 0; i < d.depth; ++i) acc += x[b * d.depth + i] * w[o * d.depth + i];
      if (bias) acc += bias[o];
      y[b * d.units + o] = apply_activation(act, acc);
    }
}

std::string check(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.outputs.empty()) return "needs an input, weights and an output";
  const Value& x = g.value(n.inputs[0]);
  const Value& w = g.value(n.inputs[1]);
  const Value& y = g.value(n.outputs[0]);
  if (w.shape.size() != 2 || w.shape[1] <= 0) return "the weights must be [units, depth]";
  int64_t elements = 1, out_elements = 1;
  for (int64_t e : x.shape) elements *= e;
  for (int64_t e : y.shape) out_elements *= e;
  if (elements % w.shape[1] != 0)
    return fmt::format("{} input elements are no whole number of rows of {}", elements, w.shape[1]);
  if (out_elements != elements / w.shape[1] * w.shape[0])
    return fmt::format("output has {} elements, {} expected", out_elements, elements / w.shape[1] * w.shape[0]);
  if (n.string_attr("weights_format", "DEFAULT") != "DEFAULT") return "only the DEFAULT weights format";
  if (auto why = check_activation(fused_activation(n)); !why.empty()) return why;
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2].valid();
  if (has_bias && g.value(n.inputs[2]).shape != Shape{w.shape[0]}) return "the bias must have one value per unit";
  if (x.dtype == DType::kFloat32) {
    if (w.dtype != DType::kFloat32 || y.dtype != DType::kFloat32) return "a float input needs float weights and output";
    if (has_bias && g.value(n.inputs[2]).dtype != DType::kFloat32) return "a float layer needs a float bias";
    return {};
  }
  if (x.dtype != DType::kInt8 || w.dtype != DType::kInt8 || y.dtype != DType::kInt8)
    return fmt::format("{} input, {} weights, {} output (int8 or float32 expected)", dtype_name(x.dtype),
                       dtype_name(w.dtype), dtype_name(y.dtype));
  if (has_bias && g.value(n.inputs[2]).dtype != DType::kInt32) return "an int8 layer needs an int32 bias";
  if (auto why = check_per_tensor(g, n, 0, false); !why.empty()) return why;
  if (auto why = check_per_tensor(g, n, 0, true); !why.empty()) return why;
  if (!w.quant || w.quant->scales.empty()) return "the weights have no quantization";
  if (w.quant->scales.size() != 1 && static_cast<int64_t>(w.quant->scales.size()) != w.shape[0])
    return fmt::format("the weights have {} scales for {} units", w.quant->scales.size(), w.shape[0]);
  if (w.quant->scales.size() != 1)
    for (int64_t zp : w.quant->zero_points)
      if (zp != 0) return "per-channel weights must have zero points 0";
  return {};
}

}  // namespace

void add_fully_connected_kernels(KernelTable& t) {
  t.emplace_back("tflite:FULLY_CONNECTED", Kernel{check, [](KernelContext& ctx) {
                                                    if (ctx.in(0).dtype == DType::kFloat32)
                                                      run_float(ctx);
                                                    else
                                                      run_int8(ctx);
                                                  }});
}

}  // namespace memledger::exec::tflite
