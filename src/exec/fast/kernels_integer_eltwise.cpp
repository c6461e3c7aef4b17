// The fast integer elementwise operators and GlobalAveragePool: the fast set's own loops,
// on activations in either byte order (a chain of fast int8 Convs keeps its activations
// channels-last through them), computing the reference kernels' very integers (the
// per-element arithmetic is integer_elementwise.h's, shared with them): bit-identical on
// every machine, with no int8 dot products needed.
//   Add, Mul: operands of the output's shape (in the output's order), or one of them a
//     scalar or a per-channel vector ([C] broadcast over a 4-d output's channel axis, as
//     a squeeze-and-excitation gate or a per-channel constant is).
//   Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish: the reference kernel's table.
//   x·Sigmoid(x), x·HardSigmoid(x) (a SiLU or hard-swish as exported: the Mul with its gate,
//     ir/self_gated.h): y depends on x's code alone, so the gate's table and the Mul's
//     arithmetic fold into one table; the gate's node is skipped (its output never written).
//   GlobalAveragePool: int32 sums per channel (channels-last: in the workspace, one per
//     channel), requantized by the shared mean.
// Both rules (onnxruntime's float scale, TFLite's fixed point) are taken. The loops are
// built with GCC's dynamic vectorizer cost model and -fno-trapping-math (CMakeLists.txt): plain -O2 leaves
// them scalar.
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

#include "exec/fast/kernel_common.h"
#include "exec/fast/parallel.h"
#include "exec/integer_elementwise.h"

namespace memledger::exec::fast {
namespace {

// A node run by one of the loops below.
class IntegerLoopNode : public PreparedNode {
 public:
  IntegerLoopNode(std::function<void(KernelContext&)> run, std::string what, int64_t workspace, int in_place_input)
      : run_(std::move(run)), what_(std::move(what)), workspace_(workspace), in_place_input_(in_place_input) {}
  int64_t workspace_bytes() const override { return workspace_; }
  void run(KernelContext& ctx) override { run_(ctx); }
  std::string describe() const override { return what_; }
  // Elementwise: each element is read before it is written, at the same offset.
  bool keeps_in_place_promise() const override { return in_place_input_ >= 0; }
  int in_place_input() const override { return in_place_input_; }

 private:
  std::function<void(KernelContext&)> run_;
  std::string what_;
  int64_t workspace_;
  int in_place_input_;
};

// Calls f(A{}, B{}, Y{}) with the 8-bit types of the values.
template <typename F>
void with_types(DType a, DType b, DType y, F&& f) {
  with_8bit_type(
      a, [&](auto at) { with_8bit_type(b, [&](auto bt) { with_8bit_type(y, [&](auto yt) { f(at, bt, yt); }); }); });
}

bool is_8bit(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

void require_8bit(const Value& v) {
  if (!is_8bit(v.dtype) || !v.quant) not_fast(fmt::format("'{}' is not an 8-bit quantized tensor", v.name));
}

// ---- Add, Mul ----

// How the second operand (`other`) of a binary node meets the full-shape one.
enum class Broadcast : uint8_t { kNone, kScalar, kChannel };

// Output element i's channel under the layout: NHWC (i % C) or NCHW ((i / HW) % C).
struct ChannelIndex {
  int64_t channels = 1, plane = 1;  // C, H·W
  bool channels_last = false;
};

// y[i] = op(full[i], other[i]) for i < n, or op(full[i], other[0]) where `one_other` (operands
// in the node's order: kFullFirst says whether the full-shape operand is input 0). Computed into
// a local chunk and copied out, so that the loop vectorizes also when y is full's own buffer (in
// place), where GCC's runtime alias check would send it to the scalar loop.
template <bool kFullFirst, typename F, typename O, typename Y, typename Op>
void binary_span(const F* full, const O* other, bool one_other, Y* y, int64_t n, const Op& op) {
  constexpr int64_t kChunk = 512;
  const Op f = op;  // a local copy: the byte stores below cannot alias it
  auto apply = [&f](int32_t a, int32_t b) { return kFullFirst ? f(a, b) : f(b, a); };
  alignas(64) Y chunk[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t m = std::min(kChunk, n - start);
    const F* in = full + start;
    if (one_other) {
      const auto o = static_cast<int32_t>(other[0]);
      for (int64_t i = 0; i < m; ++i) chunk[i] = static_cast<Y>(apply(static_cast<int32_t>(in[i]), o));
    } else {
      const O* second = other + start;
      for (int64_t i = 0; i < m; ++i)
        chunk[i] = static_cast<Y>(apply(static_cast<int32_t>(in[i]), static_cast<int32_t>(second[i])));
    }
    std::memcpy(y + start, chunk, static_cast<size_t>(m) * sizeof(Y));
  }
}

// y = op(full, other) over `count` elements, `other` broadcast as `how` says.
template <bool kFullFirst, typename F, typename O, typename Y, typename Op>
void binary_loop(const F* full, const O* other, Y* y, int64_t count, Broadcast how, const ChannelIndex& at,
                 const Op& op) {
  switch (how) {
    case Broadcast::kNone:
    case Broadcast::kScalar: {
      const bool scalar = how == Broadcast::kScalar;
      parallel_ranges(count, kLoopGrain, [&](int64_t begin, int64_t end, int) {
        binary_span<kFullFirst>(full + begin, scalar ? other : other + begin, scalar, y + begin, end - begin, op);
      });
      return;
    }
    case Broadcast::kChannel: {
      const int64_t C = at.channels, P = at.plane;
      if (at.channels_last) {  // each pixel's C channels against the vector
        parallel_ranges(count / C, std::max<int64_t>(kLoopGrain / C, 1), [&](int64_t begin, int64_t end, int) {
          for (int64_t p = begin * C; p < end * C; p += C)
            binary_span<kFullFirst>(full + p, other, false, y + p, C, op);
        });
      } else {  // each channel's plane against its entry
        parallel_ranges(count / P, std::max<int64_t>(kLoopGrain / P, 1), [&](int64_t begin, int64_t end, int) {
          for (int64_t plane = begin; plane < end; ++plane)
            binary_span<kFullFirst>(full + plane * P, other + plane % C, true, y + plane * P, P, op);
        });
      }
      return;
    }
  }
}

// Whether `other` (shape `o`) is a per-channel vector of the 4-d output `y`: [C] along the
// channel axis after right alignment, 1 elsewhere, with one batch.
bool per_channel(const Shape& o, const Shape& y) {
  if (y.size() != 4 || y[0] != 1 || o.size() > 4 || o.size() < 3) return false;
  Shape padded(4 - o.size(), 1);
  padded.insert(padded.end(), o.begin(), o.end());
  return padded[0] == 1 && padded[1] == y[1] && padded[2] == 1 && padded[3] == 1;
}

}  // namespace

std::unique_ptr<PreparedNode> prepare_integer_binary(const Graph& g, const Node& n, const PrepareOptions& options) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1) not_fast("not a two-input node");
  const bool mul = n.op == "Mul";
  if (!mul && n.op != "Add") not_fast("no fast integer " + n.op);
  const Value& yv = out_value(g, n);
  const Value &a = in_value(g, n, 0), &b = in_value(g, n, 1);
  for (const Value* v : {&a, &b, &yv}) require_8bit(*v);
  const bool full_first = a.shape == yv.shape;
  const Value& full = full_first ? a : b;
  const Value& other = full_first ? b : a;
  if (full.shape != yv.shape) not_fast("neither operand has the output's shape");
  const int64_t count = element_count(yv.shape, yv.name);
  Broadcast how = Broadcast::kNone;
  ChannelIndex at;
  if (other.shape != yv.shape) {
    if (element_count(other.shape, other.name) == 1) {
      how = Broadcast::kScalar;
    } else if (per_channel(other.shape, yv.shape)) {
      how = Broadcast::kChannel;
      at = {yv.shape[1], yv.shape[2] * yv.shape[3], channels_last(options, n.outputs[0])};
    } else {
      not_fast("a broadcast other than a scalar or a per-channel vector");
    }
  }
  const int full_index = full_first ? 0 : 1;
  auto run = [mul, count, how, at, full_first, full_index](KernelContext& ctx) {
    const InputView& f = ctx.in(static_cast<size_t>(full_index));
    const InputView& o = ctx.in(static_cast<size_t>(1 - full_index));
    with_types(f.dtype, o.dtype, ctx.out().dtype, [&](auto ft, auto ot, auto yt) {
      using F = decltype(ft);
      using O = decltype(ot);
      using Y = decltype(yt);
      with_integer_binary(mul, ctx.graph.requantization, input_quant(ctx, 0), input_quant(ctx, 1), output_quant(ctx),
                          quant_range(ctx.out().dtype), [&](const auto& op) {
                            if (full_first)
                              binary_loop<true>(f.as<F>(), o.as<O>(), ctx.out().as<Y>(), count, how, at, op);
                            else
                              binary_loop<false>(f.as<F>(), o.as<O>(), ctx.out().as<Y>(), count, how, at, op);
                          });
    });
  };
  const char* shape = how == Broadcast::kNone ? "" : how == Broadcast::kScalar ? ", scalar" : ", per channel";
  return std::make_unique<IntegerLoopNode>(run, fmt::format("integer {} (loop{})", n.op, shape), 0, full_index);
}

namespace {

// y[i] = codes[x[i] − lo] over `count` elements.
template <typename X, typename Y>
void table_loop(const X* x, Y* y, int64_t count, const std::array<Y, 256>& codes, int32_t lo) {
  parallel_ranges(count, kLoopGrain, [x, y, &codes, lo](int64_t begin, int64_t end, int) {
    const std::array<Y, 256> table = codes;  // a local copy: the byte stores cannot alias it
    const int32_t low = lo;
    for (int64_t i = begin; i < end; ++i) y[i] = table[static_cast<size_t>(static_cast<int32_t>(x[i]) - low)];
  });
}

// Runs y = table[x − lo] from input `x_input` with the table's entries as y's type.
void run_table(KernelContext& ctx, size_t x_input, const std::array<int32_t, 256>& table, int64_t count) {
  const int32_t lo = quant_range(ctx.in(x_input).dtype).lo;
  with_8bit_type(ctx.in(x_input).dtype, [&](auto xt) {
    with_8bit_type(ctx.out().dtype, [&](auto yt) {
      using Y = decltype(yt);
      std::array<Y, 256> codes{};
      for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<Y>(table[i]);
      table_loop(ctx.in(x_input).as<decltype(xt)>(), ctx.out().as<Y>(), count, codes, lo);
    });
  });
}

// The fused self-gated Mul's node: says fused(), so its gate's node may be skipped.
class GatedTableNode : public IntegerLoopNode {
 public:
  using IntegerLoopNode::IntegerLoopNode;
  bool fused() const override { return true; }
};

}  // namespace

std::unique_ptr<PreparedNode> prepare_integer_activation(const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  require_8bit(xv);
  require_8bit(yv);
  if (xv.shape != yv.shape) not_fast("shape");
  const int64_t count = element_count(yv.shape, yv.name);
  if (n.op == "Clip") {  // its bounds are inputs: the table is made at each run
    auto run = [count](KernelContext& ctx) { run_table(ctx, 0, integer_activation_table(ctx), count); };
    return std::make_unique<IntegerLoopNode>(run, "integer Clip (table)", 0, 0);
  }
  const std::array<int32_t, 256> table = integer_activation_table(g, n);
  auto run = [count, table](KernelContext& ctx) { run_table(ctx, 0, table, count); };
  return std::make_unique<IntegerLoopNode>(run, "integer " + n.op + " (table)", 0, 0);
}

std::unique_ptr<PreparedNode> prepare_quantize(const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  require_8bit(yv);
  if (xv.dtype != DType::kFloat32 || xv.shape != yv.shape) not_fast("QuantizeLinear other than float32 to its shape");
  if (!has_in(n, 1) || !in_value(g, n, 1).is_constant() || in_value(g, n, 1).constant->elements() != 1)
    not_fast("a scale that is not one constant");
  if (has_in(n, 2) && (!in_value(g, n, 2).is_constant() || in_value(g, n, 2).constant->elements() != 1))
    not_fast("a zero point that is not one constant");
  const float scale = in_value(g, n, 1).constant->data<float>()[0];
  const int32_t zero = has_in(n, 2) ? static_cast<int32_t>(in_value(g, n, 2).constant->element_as_double(0)) : 0;
  const int64_t count = element_count(yv.shape, yv.name);
  auto run = [scale, zero, count](KernelContext& ctx) {
    const float* x = ctx.in(0).as<float>();
    with_8bit_type(ctx.out().dtype, [&](auto yt) {
      using Y = decltype(yt);
      Y* y = ctx.out().as<Y>();
      // The reference's nearbyint(x / s) + z, saturated, NaN to 0 (kernels_quantization.cpp):
      // the quotient clamped to ±2^22 (it saturates beyond either way) and rounded half to
      // even by adding and subtracting 1.5·2^23, so the loop has no library call.
      constexpr float kLimit = 4194304.0f, kShift = 12582912.0f;
      const auto lo = static_cast<float>(std::numeric_limits<Y>::lowest());
      const auto hi = static_cast<float>(std::numeric_limits<Y>::max());
      const auto z = static_cast<float>(zero);
      const float s = scale;
      parallel_ranges(count, kLoopGrain, [x, y, s, z, lo, hi](int64_t begin, int64_t end, int) {
        for (int64_t i = begin; i < end; ++i) {
          const float v = x[i] / s;
          float c = v > -kLimit ? v : -kLimit;
          c = c < kLimit ? c : kLimit;
          float q = (c + kShift) - kShift + z;
          q = q < lo ? lo : (q > hi ? hi : q);
          y[i] = static_cast<Y>(v == v ? q : 0.0f);
        }
      });
    });
  };
  return std::make_unique<IntegerLoopNode>(run, "QuantizeLinear (own loop)", 0, -1);
}

std::unique_ptr<PreparedNode> prepare_integer_gated(const Graph& g, const Node& mul, int x) {
  const Value& xv = in_value(g, mul, static_cast<size_t>(x));
  const Value& sv = in_value(g, mul, static_cast<size_t>(1 - x));
  const Value& yv = out_value(g, mul);
  for (const Value* v : {&xv, &sv, &yv}) require_8bit(*v);
  const Node& gate = g.node(sv.producer);
  // y as a function of x's code: the gate's table, then the Mul's arithmetic on (x, gate(x)),
  // in the Mul's operand order — the reference kernels' two steps, folded into one table.
  const std::array<int32_t, 256> gate_table = integer_activation_table(g, gate);
  std::array<int32_t, 256> table{};
  const QuantRange xr = quant_range(xv.dtype);
  with_integer_binary(true, g.requantization, x == 0 ? *xv.quant : *sv.quant, x == 0 ? *sv.quant : *xv.quant, *yv.quant,
                      quant_range(yv.dtype), [&](const auto& op) {
                        for (int32_t q = xr.lo; q <= xr.hi; ++q) {
                          const int32_t s = gate_table[static_cast<size_t>(q - xr.lo)];
                          table[static_cast<size_t>(q - xr.lo)] = x == 0 ? op(q, s) : op(s, q);
                        }
                      });
  const int64_t count = element_count(yv.shape, yv.name);
  const auto input = static_cast<size_t>(x);
  auto run = [count, table, input](KernelContext& ctx) { run_table(ctx, input, table, count); };
  return std::make_unique<GatedTableNode>(run, "integer x*" + gate.op + "(x) (one table)", 0, x);
}

std::unique_ptr<PreparedNode> prepare_integer_global_pool(const Graph& g, const Node& n,
                                                          const PrepareOptions& options) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  require_8bit(xv);
  require_8bit(yv);
  if (xv.shape.size() < 3) not_fast("rank");
  if (n.op == "ReduceMean") {
    // Over the spatial axes exactly (keepdims either way: the means are in [N, C] order), the
    // reference kernel's sums and rounding are GlobalAveragePool's (kernels_quantized_conv.cpp).
    if (has_in(n, 1) && !in_value(g, n, 1).is_constant()) not_fast("axes that are not a constant");
    std::vector<int64_t> axes = n.ints_attr("axes");
    if (has_in(n, 1)) {
      const Tensor& given = *in_value(g, n, 1).constant;
      axes.clear();
      for (int64_t i = 0; i < given.elements(); ++i) axes.push_back(static_cast<int64_t>(given.element_as_double(i)));
    }
    const auto rank = static_cast<int64_t>(xv.shape.size());
    for (int64_t& a : axes) a = a < 0 ? a + rank : a;
    std::sort(axes.begin(), axes.end());
    std::vector<int64_t> spatial;
    for (int64_t a = 2; a < rank; ++a) spatial.push_back(a);
    if (axes != spatial) not_fast("a ReduceMean over other than the spatial axes");
  } else if (n.op != "GlobalAveragePool") {
    not_fast("no fast integer " + n.op);
  }
  const int64_t batches = xv.shape[0], C = xv.shape[1];
  const int64_t plane = batches * C == 0 ? 0 : element_count(xv.shape, xv.name) / (batches * C);
  const bool cl = channels_last(options, n.inputs[0]);
  const int64_t workspace = cl ? (C * static_cast<int64_t>(sizeof(int32_t)) + 63) / 64 * 64 : 0;
  auto run = [batches, C, plane, cl](KernelContext& ctx) {
    const MeanQuant mq = mean_quant(ctx);
    const int64_t count = std::max<int64_t>(plane, 1);
    // Σ(x − z_x) = Σx − plane·z_x exactly in int32 (the reference check bounds the elements).
    const auto offset = static_cast<int32_t>(plane) * mq.x_zero;
    with_8bit_type(ctx.in(0).dtype, [&](auto xt) {
      with_8bit_type(ctx.out().dtype, [&](auto yt) {
        using X = decltype(xt);
        using Y = decltype(yt);
        const X* x = ctx.in(0).as<X>();
        Y* y = ctx.out().as<Y>();
        if (!cl) {
          parallel_ranges(batches * C, std::max<int64_t>(kLoopGrain / count, 1),
                          [x, y, mq, plane, offset, count](int64_t begin, int64_t end, int) {
                            for (int64_t p = begin; p < end; ++p) {
                              int32_t sum = 0;
                              for (int64_t i = 0; i < plane; ++i) sum += static_cast<int32_t>(x[p * plane + i]);
                              y[p] = static_cast<Y>(mq(sum - offset, count));
                            }
                          });
          return;
        }
        // Each thread sums a range of the channels into its part of the workspace's sums.
        auto* sums = reinterpret_cast<int32_t*>(ctx.workspace.data());
        for (int64_t b = 0; b < batches; ++b) {
          const X* image = x + b * plane * C;
          parallel_ranges(C, std::max<int64_t>(kLoopGrain / count, 16),
                          [image, y, sums, mq, plane, offset, count, b, C](int64_t begin, int64_t end, int) {
                            std::memset(sums + begin, 0, static_cast<size_t>(end - begin) * sizeof(int32_t));
                            for (int64_t p = 0; p < plane; ++p)
                              for (int64_t c = begin; c < end; ++c) sums[c] += static_cast<int32_t>(image[p * C + c]);
                            for (int64_t c = begin; c < end; ++c)
                              y[b * C + c] = static_cast<Y>(mq(sums[c] - offset, count));
                          });
        }
      });
    });
  };
  return std::make_unique<IntegerLoopNode>(
      run, cl ? "integer GlobalAveragePool (loop, channels-last)" : "integer GlobalAveragePool (loop)", workspace, -1);
}

}  // namespace memledger::exec::fast
