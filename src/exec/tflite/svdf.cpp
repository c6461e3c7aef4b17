// SVDF (singular value decomposition filter), with its state: input 4 is the state
// [batch, memory · filters] (a persistent value, zeros at the start), output 1 the new state,
// which the planner may give the same bytes (tflite-contract.md). As TFLite Micro's
// EvalIntegerSvdfReference for int8 (int16 or int8 time weights and state):
//  1. the state shifts one step left along the memory (read before written, so output 1 may
//     be input 4's bytes);
//  2. each filter's feature dot product (x − zp_x) · w_f, rescaled by s_x · s_wf / s_state
//     (the product in float, as TFLM computes it), plus zp_state, saturated, becomes the
//     newest memory column;
//  3. each filter's time dot product w_t · (state − zp_state) in int32, summed over `rank`
//     filters per unit plus the bias (both sums wrapping in int32 as TFLite's do), rescaled
//     by s_state · s_wt / s_out, plus zp_out, saturated to int8 (TFLM applies no fused
//     activation on this path).
// Float: the same steps in float and the fused activation. The two int32 scratch rows
// (filters and units per batch) are the kernel's own, as small as the layer.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "exec/tflite/common.h"
#include "exec/tflite/kernels.h"

namespace memledger::exec::tflite {
namespace {

// A sum as TFLite's int32 accumulators hold it: two's complement, wrapping where it
// overflows (C++20 defines the conversion as modular). TFLite and TFLite Micro sum the time
// products in int32 and wrap on every target; saturating instead flipped the sign of
// keyword_scrambled's SVDF outputs (its scrambled weights overflow), against TFLite's own
// interpreter.
int32_t wrap_int32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

struct Dims {
  int64_t batch, input, filters, units, memory, rank;
};

Dims dims(const KernelContext& ctx) {
  Dims d{};
  d.batch = ctx.in(0).shape[0], d.input = ctx.in(0).shape[1];
  d.filters = ctx.in(1).shape[0], d.memory = ctx.in(2).shape[1];
  d.rank = ctx.node.int_attr("rank", 1);
  d.units = d.filters / d.rank;
  return d;
}

// The new state's bytes: output 1, or the kernel's own when the node has no such output.
template <typename T>
T* shifted_state(KernelContext& ctx, const Dims& d, std::vector<T>& own) {
  const int64_t n = d.batch * d.filters * d.memory;
  const T* old_state = ctx.in(4).as<T>();
  T* state = nullptr;
  if (ctx.has_output(1)) {
    state = ctx.out(1).as<T>();
  } else {
    own.assign(static_cast<size_t>(n), T{});
    state = own.data();
  }
  // Every element moves one place towards the front; memmove keeps it right in place.
  if (n > 1) std::memmove(state, old_state + 1, static_cast<size_t>(n - 1) * sizeof(T));
  return state;
}

template <typename T>
void run_int8(KernelContext& ctx) {
  const Dims d = dims(ctx);
  const TensorQuant qx = input_quant(ctx, 0), qf = input_quant(ctx, 1), qt = input_quant(ctx, 2);
  const TensorQuant qs = input_quant(ctx, 4), qo = output_quant(ctx, 0);
  const FixedPointMultiplier scale_1 = quantize_multiplier(static_cast<double>(qx.scale * qf.scale / qs.scale));
  const FixedPointMultiplier scale_2 = quantize_multiplier(static_cast<double>(qs.scale * qt.scale / qo.scale));
  std::vector<T> own;
  T* state = shifted_state<T>(ctx, d, own);
  const int8_t* x = ctx.in(0).as<int8_t>();
  const int8_t* wf = ctx.in(1).as<int8_t>();
  const T* wt = ctx.in(2).as<T>();
  const int32_t* bias = ctx.has_input(3) ? ctx.in(3).as<int32_t>() : nullptr;
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t r = 0; r < d.filters; ++r) {
      int32_t dot = 0;
      for (int64_t c = 0; c < d.input; ++c) dot += wf[r * d.input + c] * (x[b * d.input + c] - qx.zero_point);
      dot = multiply_by_quantized_multiplier(dot, scale_1) + qs.zero_point;
      state[(b * d.filters + r) * d.memory + d.memory - 1] = static_cast<T>(std::clamp(dot, lo, hi));
    }
  std::vector<int32_t> scratch(static_cast<size_t>(d.batch * d.filters));
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t i = 0; i < d.filters; ++i) {
      // Summed in 64 bits, then wrapped to int32 as TFLite's own int32 sum is.
      int64_t acc = 0;
      const T* s = state + (b * d.filters + i) * d.memory;
      for (int64_t j = 0; j < d.memory; ++j) acc += int64_t{wt[i * d.memory + j]} * (s[j] - qs.zero_point);
      scratch[static_cast<size_t>(b * d.filters + i)] = wrap_int32(acc);
    }
  int8_t* y = ctx.out(0).as<int8_t>();
  const QuantRange range = type_range(DType::kInt8);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t u = 0; u < d.units; ++u) {
      int64_t acc = bias ? bias[u] : 0;
      for (int64_t k = 0; k < d.rank; ++k) acc += scratch[static_cast<size_t>(b * d.filters + u * d.rank + k)];
      y[b * d.units + u] =
          clamp_to<int8_t>(multiply_by_quantized_multiplier(wrap_int32(acc), scale_2) + qo.zero_point, range);
    }
}

void run_float(KernelContext& ctx) {
  const Dims d = dims(ctx);
  std::vector<float> own;
  float* state = shifted_state<float>(ctx, d, own);
  const float* x = ctx.in(0).as<float>();
  const float* wf = ctx.in(1).as<float>();
  const float* wt = ctx.in(2).as<float>();
  const float* bias = ctx.has_input(3) ? ctx.in(3).as<float>() : nullptr;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t r = 0; r < d.filters; ++r) {
      float dot = 0.0f;
      for (int64_t c = 0; c < d.input; ++c) dot += wf[r * d.input + c] * x[b * d.input + c];
      state[(b * d.filters + r) * d.memory + d.memory - 1] = dot;
    }
  const std::string act = fused_activation(ctx.node);
  float* y = ctx.out(0).as<float>();
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t u = 0; u < d.units; ++u) {
      float acc = bias ? bias[u] : 0.0f;
      for (int64_t k = 0; k < d.rank; ++k) {
        const int64_t i = u * d.rank + k;
        float t = 0.0f;
        const float* s = state + (b * d.filters + i) * d.memory;
        for (int64_t j = 0; j < d.memory; ++j) t += wt[i * d.memory + j] * s[j];
        acc += t;
      }
      y[b * d.units + u] = apply_activation(act, acc);
    }
}

std::string check(const Graph& g, const Node& n) {
  if (n.inputs.size() != 5 || n.outputs.empty()) return "needs five inputs (the state last) and an output";
  for (size_t i : {0, 1, 2, 4})
    if (!n.inputs[i].valid()) return fmt::format("input {} is missing", i);
  const Value& x = g.value(n.inputs[0]);
  const Value& wf = g.value(n.inputs[1]);
  const Value& wt = g.value(n.inputs[2]);
  const Value& state = g.value(n.inputs[4]);
  const Value& y = g.value(n.outputs[0]);
  if (x.shape.size() != 2 || wf.shape.size() != 2 || wt.shape.size() != 2 || state.shape.size() != 2)
    return "input, weights and state must be 2-D";
  const int64_t rank = n.int_attr("rank", 1);
  const int64_t filters = wf.shape[0], memory = wt.shape[1];
  if (rank <= 0 || filters % rank != 0) return fmt::format("{} filters are not a multiple of rank {}", filters, rank);
  if (wf.shape[1] != x.shape[1]) return "feature weights must be [filters, input size]";
  if (wt.shape[0] != filters || memory <= 0) return "time weights must be [filters, memory]";
  if (state.shape != Shape{x.shape[0], memory * filters}) return "the state must be [batch, memory · filters]";
  if (y.shape != Shape{x.shape[0], filters / rank}) return "the output must be [batch, units]";
  const bool has_bias = n.inputs[3].valid();
  if (has_bias && g.value(n.inputs[3]).shape != Shape{filters / rank}) return "the bias must have one value per unit";
  if (n.outputs.size() > 1 && n.outputs[1].valid()) {
    const Value& new_state = g.value(n.outputs[1]);
    if (new_state.shape != state.shape || new_state.dtype != state.dtype) return "output 1 must be like the state";
  }
  if (x.dtype == DType::kFloat32) {
    for (const Value* v : {&wf, &wt, &state, &y})
      if (v->dtype != DType::kFloat32) return "a float SVDF needs float weights, state and output";
    if (auto why = check_activation(fused_activation(n)); !why.empty()) return why;
    return {};
  }
  if (x.dtype != DType::kInt8 || wf.dtype != DType::kInt8 || y.dtype != DType::kInt8)
    return "an integer SVDF needs int8 input, feature weights and output";
  if (wt.dtype != state.dtype || (wt.dtype != DType::kInt16 && wt.dtype != DType::kInt8))
    return "time weights and state must both be int16 or both int8";
  if (has_bias && g.value(n.inputs[3]).dtype != DType::kInt32) return "the bias must be int32";
  for (size_t i : {0, 1, 2, 4})
    if (auto why = check_per_tensor(g, n, i, false); !why.empty()) return why;
  return check_per_tensor(g, n, 0, true);
}

}  // namespace

void add_svdf_kernels(KernelTable& t) {
  t.emplace_back("tflite:SVDF", Kernel{check, [](KernelContext& ctx) {
                                         if (ctx.in(0).dtype == DType::kFloat32)
                                           run_float(ctx);
                                         else if (ctx.in(2).dtype == DType::kInt16)
                                           run_int8<int16_t>(ctx);
                                         else
                                           run_int8<int8_t>(ctx);
                                       }});
}

}  // namespace memledger::exec::tflite
