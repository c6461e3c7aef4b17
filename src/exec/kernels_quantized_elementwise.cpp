// The integer elementwise operators: Add and Mul (broadcast), Concat (each input
// requantized to the output's parameters), and the activations Relu, Clip, LeakyRelu,
// Sigmoid, HardSigmoid, HardSwish, Tanh by a 256-entry table (dequantize every possible
// input, apply the float function, quantize by the graph's rule: quantized.h). Add's and
// Mul's arithmetic under either rule is integer_elementwise.h's, shared with the fast set.
// Concat: an input quantized like the output is copied; another is requantized with
// s_i/s_y (scale_round_half_even or the Q31 multiplier).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "activation_functions.h"
#include "integer_elementwise.h"
#include "kernel.h"
#include "quantized.h"
#include "strided.h"

namespace memledger::exec {
namespace {

// ---- Add, Mul ----

// Calls f(a_code, b_code) for every output element (broadcast), storing its result in y.
template <typename A, typename B, typename Y, typename F>
void broadcast_codes(const KernelContext& ctx, Y* y, F&& f) {
  const InputView& a = ctx.in(0);
  const InputView& b = ctx.in(1);
  const Shape& shape = ctx.outputs[0].shape;
  StridedLoop<3> loop(shape,
                      {dense_strides(shape), broadcast_strides(a.shape, shape), broadcast_strides(b.shape, shape)});
  const A* pa = a.as<A>();
  const B* pb = b.as<B>();
  loop.for_each_row([&](const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& st) {
    Y* out = y + off[0];
    const A* ra = pa + off[1];
    const B* rb = pb + off[2];
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<Y>(f(static_cast<int32_t>(ra[i * st[1]]), static_cast<int32_t>(rb[i * st[2]])));
  });
}

template <bool kMul>
void binary(KernelContext& ctx) {
  with_8bit_type(ctx.in(0).dtype, [&](auto at) {
    with_8bit_type(ctx.in(1).dtype, [&](auto bt) {
      with_8bit_type(ctx.out().dtype, [&](auto yt) {
        using A = decltype(at);
        using B = decltype(bt);
        using Y = decltype(yt);
        with_integer_binary(kMul, ctx.graph.requantization, input_quant(ctx, 0), input_quant(ctx, 1), output_quant(ctx),
                            quant_range(ctx.out().dtype),
                            [&](const auto& op) { broadcast_codes<A, B, Y>(ctx, ctx.out().as<Y>(), op); });
      });
    });
  });
}

std::string check_binary(const Graph& g, const Node& n) {
  if (n.inputs.size() != 2) return "an integer binary operator needs two inputs";
  for (auto why : {check_quantized_operand(g, n, 0, false), check_quantized_operand(g, n, 1, false),
                   check_quantized_operand(g, n, 0, true)})
    if (!why.empty()) return why;
  return {};
}

// ---- Concat ----

void concat(KernelContext& ctx) {
  OutputView& y = ctx.out();
  const int64_t axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", 0), y.rank());
  const Quantization& yq = output_quant(ctx);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= y.shape[static_cast<size_t>(i)];
  for (int64_t i = axis + 1; i < y.rank(); ++i) inner *= y.shape[static_cast<size_t>(i)];
  const int64_t y_row = y.shape[static_cast<size_t>(axis)] * inner;
  int64_t at = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const InputView& x = ctx.in(i);
    const Quantization& xq = input_quant(ctx, i);
    const int64_t x_row = x.shape[static_cast<size_t>(axis)] * inner;
    if (x.dtype == y.dtype && xq == yq) {
      for (int64_t o = 0; o < outer; ++o)
        std::memmove(y.data + o * y_row + at, x.data + o * x_row, static_cast<size_t>(x_row));
    } else {
      const std::array<uint8_t, 256> table = requantize_bytes(ctx.graph.requantization, xq, x.dtype, yq, y.dtype);
      const auto* px = reinterpret_cast<const uint8_t*>(x.data);
      auto* py = reinterpret_cast<uint8_t*>(y.data);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t e = 0; e < x_row; ++e) py[o * y_row + at + e] = table[px[o * x_row + e]];
    }
    at += x_row;
  }
}

std::string check_concat(const Graph& g, const Node& n) {
  if (n.inputs.empty()) return "Concat of nothing";
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (auto why = check_quantized_operand(g, n, i, false); !why.empty()) return why;
  return check_quantized_operand(g, n, 0, true);
}

// ---- activations by table ----

using RealFunction = std::function<float(float)>;

// The float function of an activation node other than Clip (whose bounds are its inputs):
// the reference kernels' own (activation_functions.h).
RealFunction node_function(const Node& n) {
  const ActivationFunction f = activation_function(n);
  if (!f) fail("node {}: no integer activation {}", n.label(), n.op);
  return f;
}

// The float function of an activation node; Clip reads its bounds from its inputs (float,
// or integers dequantized by their own parameters or else by x's).
RealFunction activation(const KernelContext& ctx) {
  const Node& n = ctx.node;
  if (n.op != "Clip") return node_function(n);
  float lo = n.float_attr("min", -std::numeric_limits<float>::infinity());
  float hi = n.float_attr("max", std::numeric_limits<float>::infinity());
  const auto bound = [&](size_t i, float& target) {
    if (!ctx.has_input(i)) return;
    const InputView& v = ctx.in(i);
    if (v.elements() != 1) fail("node {}: Clip bound {} is not a scalar", n.label(), i);
    if (v.dtype == DType::kFloat32) {
      target = *v.as<float>();
      return;
    }
    const Value& value = ctx.graph.value(n.inputs[i]);
    const Quantization& q = value.quant ? *value.quant : input_quant(ctx, 0);
    with_8bit_type(v.dtype, [&](auto t) {
      target = q.scale() * static_cast<float>(static_cast<int32_t>(*v.as<decltype(t)>()) - q.zero_point());
    });
  };
  bound(1, lo);
  bound(2, hi);
  return [lo, hi](float x) { return std::min(hi, std::max(lo, x)); };
}

}  // namespace

std::array<int32_t, 256> integer_activation_table(const KernelContext& ctx) {
  return activation_table(ctx.graph.requantization, input_quant(ctx, 0), ctx.in(0).dtype, output_quant(ctx),
                          ctx.outputs[0].dtype, activation(ctx));
}

std::array<int32_t, 256> integer_activation_table(const Graph& g, const Node& n) {
  const Value& x = g.value(n.inputs.at(0));
  const Value& y = g.value(n.outputs.at(0));
  ML_CHECK(x.quant && y.quant, "node {}: an integer activation without quantization", n.label());
  return activation_table(g.requantization, *x.quant, x.dtype, *y.quant, y.dtype, node_function(n));
}

namespace {

void table_activation(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const std::array<int32_t, 256> table = integer_activation_table(ctx);
  const int32_t lo = quant_range(x.dtype).lo;
  with_8bit_type(x.dtype, [&](auto xt) {
    with_8bit_type(y.dtype, [&](auto yt) {
      using X = decltype(xt);
      using Y = decltype(yt);
      const X* px = x.as<X>();
      Y* py = y.as<Y>();
      const int64_t count = y.elements();
      for (int64_t i = 0; i < count; ++i)
        py[i] = static_cast<Y>(table[static_cast<size_t>(static_cast<int32_t>(px[i]) - lo)]);
    });
  });
}

std::string check_activation(const Graph& g, const Node& n) {
  for (auto why : {check_quantized_operand(g, n, 0, false), check_quantized_operand(g, n, 0, true)})
    if (!why.empty()) return why;
  if (n.op == "Clip")
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      if (!n.inputs[i].valid()) continue;
      const Value& v = g.value(n.inputs[i]);
      if (v.dtype != DType::kFloat32 && v.dtype != DType::kInt8 && v.dtype != DType::kUInt8)
        return fmt::format("input {} (Clip bound '{}') is {}", i, v.name, dtype_name(v.dtype));
    }
  return {};
}

}  // namespace

void add_quantized_elementwise_kernels(KernelTable& t) {
  t.emplace_back(":Add", Kernel{.check = check_binary, .run = binary<false>});
  t.emplace_back(":Mul", Kernel{.check = check_binary, .run = binary<true>});
  t.emplace_back(":Concat", Kernel{.check = check_concat, .run = concat});
  for (const char* op : {"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh"})
    t.emplace_back(std::string(":") + op, Kernel{.check = check_activation, .run = table_activation});
}

}  // namespace memledger::exec
