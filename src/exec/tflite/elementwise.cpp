// ADD, SUB and MUL with numpy broadcasting. int8 as TFLite's reference kernels: ADD and SUB
// bring both operands to a common scale twice the larger input scale, with 20 bits of
// headroom (left_shift 20, a QuantizeMultiplierSmallerThanOneExp multiplier per input),
// add or subtract, and rescale to the output (a third multiplier); MUL multiplies the
// offset operands in int32 and requantizes by s_a · s_b / s_out. Then the output zero point
// and the fused activation's range. Float: the operation and the fused activation.
#include <algorithm>
#include <vector>

#include "exec/tflite/common.h"
#include "exec/tflite/kernels.h"

namespace memledger::exec::tflite {
namespace {

enum class Op { kAdd, kSub, kMul };

// Calls f(output index, a index, b index) over the output in row-major order.
template <typename F>
void broadcast_loop(const InputView& a, const InputView& b, const Shape& out, F&& f) {
  const std::vector<int64_t> sa = broadcast_strides(a.shape, out), sb = broadcast_strides(b.shape, out);
  int64_t n = 1;
  for (int64_t e : out) n *= e;
  std::vector<int64_t> index(out.size(), 0);
  int64_t ia = 0, ib = 0;
  for (int64_t o = 0; o < n; ++o) {
    f(o, ia, ib);
    for (size_t d = out.size(); d-- > 0;) {
      ia += sa[d];
      ib += sb[d];
      if (++index[d] < out[d]) break;
      ia -= sa[d] * out[d];
      ib -= sb[d] * out[d];
      index[d] = 0;
    }
  }
}

template <Op kOp>
void run_int8(KernelContext& ctx) {
  const InputView& a = ctx.in(0);
  const InputView& b = ctx.in(1);
  const TensorQuant qa = input_quant(ctx, 0), qb = input_quant(ctx, 1), qo = output_quant(ctx);
  const QuantRange range = activation_range(fused_activation(ctx.node), qo, DType::kInt8);
  const int8_t* pa = a.as<int8_t>();
  const int8_t* pb = b.as<int8_t>();
  int8_t* y = ctx.out().as<int8_t>();
  if constexpr (kOp == Op::kMul) {
    const FixedPointMultiplier m = quantize_multiplier(static_cast<double>(qa.scale) * static_cast<double>(qb.scale) /
                                                       static_cast<double>(qo.scale));
    broadcast_loop(a, b, ctx.out().shape, [&](int64_t o, int64_t ia, int64_t ib) {
      const int32_t product = (pa[ia] - qa.zero_point) * (pb[ib] - qb.zero_point);
      y[o] = clamp_to<int8_t>(qo.zero_point + multiply_by_quantized_multiplier(product, m), range);
    });
  } else {
    constexpr int kLeftShift = 20;
    const double twice_max = 2 * static_cast<double>(std::max(qa.scale, qb.scale));
    const FixedPointMultiplier ma = quantize_multiplier(static_cast<double>(qa.scale) / twice_max);
    const FixedPointMultiplier mb = quantize_multiplier(static_cast<double>(qb.scale) / twice_max);
    const FixedPointMultiplier mo =
        quantize_multiplier(twice_max / ((1 << kLeftShift) * static_cast<double>(qo.scale)));
    broadcast_loop(a, b, ctx.out().shape, [&](int64_t o, int64_t ia, int64_t ib) {
      const int32_t sa = multiply_by_quantized_multiplier((pa[ia] - qa.zero_point) * (1 << kLeftShift), ma);
      const int32_t sb = multiply_by_quantized_multiplier((pb[ib] - qb.zero_point) * (1 << kLeftShift), mb);
      const int32_t raw = kOp == Op::kAdd ? sa + sb : sa - sb;
      y[o] = clamp_to<int8_t>(multiply_by_quantized_multiplier(raw, mo) + qo.zero_point, range);
    });
  }
}

template <Op kOp>
void run_float(KernelContext& ctx) {
  const InputView& a = ctx.in(0);
  const InputView& b = ctx.in(1);
  const std::string act = fused_activation(ctx.node);
  const float* pa = a.as<float>();
  const float* pb = b.as<float>();
  float* y = ctx.out().as<float>();
  broadcast_loop(a, b, ctx.out().shape, [&](int64_t o, int64_t ia, int64_t ib) {
    const float v = kOp == Op::kAdd ? pa[ia] + pb[ib] : kOp == Op::kSub ? pa[ia] - pb[ib] : pa[ia] * pb[ib];
    y[o] = apply_activation(act, v);
  });
}

std::string check(const Graph& g, const Node& n) {
  if (n.inputs.size() != 2 || n.outputs.empty()) return "needs two inputs and an output";
  const Value& a = g.value(n.inputs[0]);
  const Value& b = g.value(n.inputs[1]);
  const Value& y = g.value(n.outputs[0]);
  for (const Value* v : {&a, &b}) {
    if (v->shape.size() > y.shape.size()) return "an operand has a higher rank than the output";
    const size_t shift = y.shape.size() - v->shape.size();
    for (size_t i = 0; i < v->shape.size(); ++i)
      if (v->shape[i] != 1 && v->shape[i] != y.shape[shift + i])
        return fmt::format("{} does not broadcast to {}", shape_to_string(v->shape), shape_to_string(y.shape));
  }
  if (auto why = check_activation(fused_activation(n)); !why.empty()) return why;
  if (a.dtype != b.dtype || a.dtype != y.dtype) return "operand and output types differ";
  if (a.dtype == DType::kFloat32) return {};
  if (a.dtype != DType::kInt8) return fmt::format("{} operands (int8 or float32 expected)", dtype_name(a.dtype));
  for (size_t i : {0, 1})
    if (auto why = check_per_tensor(g, n, i, false); !why.empty()) return why;
  return check_per_tensor(g, n, 0, true);
}

template <Op kOp>
Kernel kernel() {
  return {check, [](KernelContext& ctx) {
            if (ctx.in(0).dtype == DType::kFloat32)
              run_float<kOp>(ctx);
            else
              run_int8<kOp>(ctx);
          }};
}

}  // namespace

void add_elementwise_kernels(KernelTable& t) {
  t.emplace_back("tflite:ADD", kernel<Op::kAdd>());
  t.emplace_back("tflite:SUB", kernel<Op::kSub>());
  t.emplace_back("tflite:MUL", kernel<Op::kMul>());
}

}  // namespace memledger::exec::tflite
