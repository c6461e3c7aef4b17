// The integer Conv and pools (reference kernels: not fast, only complete). int8 or uint8
// input and output (quantized per tensor), int8 or uint8 weights (per tensor or per output
// channel, axis 0), an optional int32 bias (scale s_x·s_w[m], zero point 0): every output
// sums bias + Σ (w − z_w[m])·(x − z_x) over its valid taps in int32 (a tap in the padding
// contributes nothing, as the input's zero point would), then requantizes by the graph's
// rule with s_x·s_w[m]/s_y (requantize.h).
//
// No workspace except for depthwise: the accumulators of a run of up to kRowChunk output
// positions live in the kernel's frame, one tap at a time over the row (the float
// conv_direct's order). A depthwise Conv (group = C = M) may write its output over its
// input (the op table's Conv contract): each output plane is computed into a workspace of
// one plane in the output's type, then copied to its place, channel by channel ascending.
//
// Pools: AveragePool, GlobalAveragePool and ReduceMean sum x − z_x in int32 and requantize the mean
// (multiplier s_x / (s_y · count)); MaxPool and nearest Resize move bytes (the float kernel's
// run) and require input and output to share their quantization.
#include <algorithm>
#include <cstring>

#include "integer_elementwise.h"
#include "kernel.h"
#include "memledger/ir/window.h"
#include "quantized.h"
#include "strided.h"

namespace memledger::exec {
namespace {

constexpr int64_t kRowChunk = 256;

struct ConvQuant {
  int32_t x_zero = 0;
  std::vector<int32_t> w_zero;  // one per map
  Requantizer requantize;
};

ConvQuant conv_quant(const KernelContext& ctx, int64_t maps) {
  const Quantization& xq = input_quant(ctx, 0);
  const Quantization& wq = input_quant(ctx, 1);
  const Quantization& yq = output_quant(ctx);
  ConvQuant q;
  q.x_zero = static_cast<int32_t>(xq.zero_point());
  std::vector<double> multipliers;
  for (int64_t m = 0; m < (wq.scales.size() == 1 ? 1 : maps); ++m) {
    multipliers.push_back(real_multiplier(ctx.graph.requantization, xq.scale(), wq.scale(m), yq.scale()));
    q.w_zero.push_back(static_cast<int32_t>(wq.zero_point(m)));
  }
  if (q.w_zero.size() == 1) q.w_zero.assign(static_cast<size_t>(maps), q.w_zero[0]);
  q.requantize = Requantizer(ctx.graph.requantization, multipliers, static_cast<int32_t>(yq.zero_point()),
                             quant_range(ctx.outputs[0].dtype));
  return q;
}

// Output map m of image n: rows of up to kRowChunk positions, each summed tap by tap.
template <typename X, typename W, typename Y>
void conv_map(const ConvShape& s, const ConvQuant& q, const X* x, const W* wt, const int32_t* bias, int64_t n,
              int64_t m, Y* out) {
  const Window& w = s.w;
  const int64_t kvol = w.k_size(), grp = m / s.mg;
  const W* filter = wt + m * s.cg * kvol;
  const int32_t wz = q.w_zero[static_cast<size_t>(m)], xz = q.x_zero;
  int32_t acc[kRowChunk];
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh)
      for (int64_t ow0 = 0; ow0 < w.out[2]; ow0 += kRowChunk) {
        const int64_t ow1 = std::min(w.out[2], ow0 + kRowChunk);
        std::fill(acc, acc + (ow1 - ow0), bias ? bias[m] : 0);
        for (int64_t c = 0; c < s.cg; ++c) {
          const X* plane = x + (n * s.channels + grp * s.cg + c) * w.in_size();
          const W* fc = filter + c * kvol;
          for (int64_t kd = 0; kd < w.k[0]; ++kd) {
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            if (id < 0 || id >= w.in[0]) continue;
            for (int64_t kh = 0; kh < w.k[1]; ++kh) {
              const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
              if (ih < 0 || ih >= w.in[1]) continue;
              const X* src = plane + (id * w.in[1] + ih) * w.in[2];
              const W* f = fc + (kd * w.k[1] + kh) * w.k[2];
              for (int64_t kw = 0; kw < w.k[2]; ++kw) {
                int64_t lo, hi;
                valid_range(w.in[2], w.out[2], w.stride[2], w.pad_begin[2], kw * w.dilation[2], lo, hi);
                lo = std::max(lo, ow0);
                hi = std::min(hi, ow1);
                const int32_t fk = static_cast<int32_t>(f[kw]) - wz;
                if (fk == 0) continue;
                const X* shifted = src - w.pad_begin[2] + kw * w.dilation[2];
                int32_t* a = acc - ow0;
                if (w.stride[2] == 1) {
                  for (int64_t ow = lo; ow < hi; ++ow) a[ow] += fk * (static_cast<int32_t>(shifted[ow]) - xz);
                } else {
                  for (int64_t ow = lo; ow < hi; ++ow)
                    a[ow] += fk * (static_cast<int32_t>(shifted[ow * w.stride[2]]) - xz);
                }
              }
            }
          }
        }
        Y* row = out + (od * w.out[1] + oh) * w.out[2];
        for (int64_t ow = ow0; ow < ow1; ++ow)
          row[ow] = static_cast<Y>(q.requantize(acc[ow - ow0], static_cast<size_t>(m)));
      }
}

template <typename X, typename W, typename Y>
void conv_typed(KernelContext& ctx, const ConvShape& s, const ConvQuant& q) {
  const X* x = ctx.in(0).as<X>();
  const W* wt = ctx.in(1).as<W>();
  const int32_t* bias = ctx.has_input(2) ? ctx.in(2).as<int32_t>() : nullptr;
  Y* y = ctx.out().as<Y>();
  Y* plane = s.depthwise() ? reinterpret_cast<Y*>(ctx.workspace.data()) : nullptr;
  if (plane)
    ML_CHECK(static_cast<int64_t>(ctx.workspace.size()) >= s.w.out_size() * static_cast<int64_t>(sizeof(Y)),
             "node {}: the depthwise workspace holds less than one output plane", ctx.node.label());
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t m = 0; m < s.maps; ++m) {
      Y* target = y + (n * s.maps + m) * s.w.out_size();
      conv_map(s, q, x, wt, bias, n, m, plane ? plane : target);
      if (plane) std::memcpy(target, plane, static_cast<size_t>(s.w.out_size()) * sizeof(Y));
    }
}

void conv(KernelContext& ctx) {
  const ConvShape s = conv_shape(ctx.graph, ctx.node);
  if (ctx.has_input(2) && ctx.in(2).elements() != s.maps)
    fail("node {}: bias has {} values for {} maps", ctx.node.label(), ctx.in(2).elements(), s.maps);
  const ConvQuant q = conv_quant(ctx, s.maps);
  with_8bit_type(ctx.in(0).dtype, [&](auto xt) {
    with_8bit_type(ctx.in(1).dtype, [&](auto wt) {
      with_8bit_type(ctx.out().dtype,
                     [&](auto yt) { conv_typed<decltype(xt), decltype(wt), decltype(yt)>(ctx, s, q); });
    });
  });
}

std::string check_conv(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2) return "an integer Conv needs input and weights";
  const Shape& w = g.value(n.inputs[1]).shape;
  if (w.empty()) return "weights of rank 0";
  for (auto why : {check_quantized_operand(g, n, 0, false), check_quantized_operand(g, n, 1, false, w[0], 0),
                   check_quantized_operand(g, n, 0, true)})
    if (!why.empty()) return why;
  if (n.inputs.size() > 2 && n.inputs[2].valid()) {
    const Value& b = g.value(n.inputs[2]);
    if (b.dtype != DType::kInt32)
      return fmt::format("input 2 (bias '{}') is {}, not int32", b.name, dtype_name(b.dtype));
    if (b.quant)
      for (int64_t z : b.quant->zero_points)
        if (z != 0) return fmt::format("input 2 (bias '{}') has zero point {}, not 0", b.name, z);
  }
  return {};
}

// ---- pools ----

// The mean of a window: integer_elementwise.h's MeanQuant, shared with the fast set.

template <typename X, typename Y>
void average_pool_typed(KernelContext& ctx) {
  const Graph& g = ctx.graph;
  const Node& node = ctx.node;
  const Window w =
      window(node, g.value(node.inputs[0]).shape, g.value(node.outputs[0]).shape, node.ints_attr("kernel_shape"));
  const bool include_pad = node.int_attr("count_include_pad", 0) != 0;
  const MeanQuant mq = mean_quant(ctx);
  const X* x = ctx.in(0).as<X>();
  Y* y = ctx.out().as<Y>();
  const int64_t planes = ctx.in(0).shape[0] * ctx.in(0).shape[1];
  for (int64_t p = 0; p < planes; ++p) {
    const X* plane = x + p * w.in_size();
    Y* out = y + p * w.out_size();
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow) {
          const int64_t o[3] = {od, oh, ow};
          int64_t padded = 1;
          for (int a = 0; a < kMaxSpatial; ++a) {
            int64_t in_pad = 0;
            for (int64_t kk = 0; kk < w.k[a]; ++kk)
              if (o[a] * w.stride[a] - w.pad_begin[a] + kk * w.dilation[a] < w.in[a] + w.pad_end[a]) ++in_pad;
            padded *= in_pad;
          }
          int32_t sum = 0;
          int64_t inside = 0;
          for (int64_t kd = 0; kd < w.k[0]; ++kd) {
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            if (id < 0 || id >= w.in[0]) continue;
            for (int64_t kh = 0; kh < w.k[1]; ++kh) {
              const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
              if (ih < 0 || ih >= w.in[1]) continue;
              for (int64_t kw = 0; kw < w.k[2]; ++kw) {
                const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
                if (iw < 0 || iw >= w.in[2]) continue;
                sum += static_cast<int32_t>(plane[(id * w.in[1] + ih) * w.in[2] + iw]) - mq.x_zero;
                ++inside;
              }
            }
          }
          out[(od * w.out[1] + oh) * w.out[2] + ow] =
              static_cast<Y>(mq(sum, include_pad ? padded : std::max<int64_t>(inside, 1)));
        }
  }
}

template <typename X, typename Y>
void global_average_pool_typed(KernelContext& ctx) {
  const InputView& xv = ctx.in(0);
  const int64_t planes = xv.shape.at(0) * xv.shape.at(1);
  const int64_t size = planes == 0 ? 0 : xv.elements() / planes;
  const MeanQuant mq = mean_quant(ctx);
  const X* x = xv.as<X>();
  Y* y = ctx.out().as<Y>();
  for (int64_t p = 0; p < planes; ++p) {
    int32_t sum = 0;
    for (int64_t i = 0; i < size; ++i) sum += static_cast<int32_t>(x[p * size + i]) - mq.x_zero;
    y[p] = static_cast<Y>(mq(sum, std::max<int64_t>(size, 1)));
  }
}

// ReduceMean: the axes from input 1 (opset 18) or the attribute; none: all of them.
template <typename X, typename Y>
void reduce_mean_typed(KernelContext& ctx) {
  const InputView& xv = ctx.in(0);
  const int64_t rank = xv.rank();
  const std::vector<int64_t> axes = ctx.has_input(1) ? read_ints(ctx.in(1)) : ctx.node.ints_attr("axes");
  Shape kept = xv.shape;
  if (axes.empty()) {
    for (int64_t& d : kept) d = 1;
  } else {
    for (int64_t a : axes) kept[static_cast<size_t>(normalize_axis(ctx.node, a, rank))] = 1;
  }
  OutputView& yv = ctx.out();
  if (element_count(kept) != yv.elements()) fail("node {}: output size does not match the reduction", ctx.node.label());
  const MeanQuant mq = mean_quant(ctx);
  std::vector<int32_t> sums(static_cast<size_t>(yv.elements()), 0);
  const X* x = xv.as<X>();
  StridedLoop<2> loop(xv.shape, {dense_strides(xv.shape), broadcast_strides(kept, xv.shape)});
  loop.for_each_row([&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
    for (int64_t i = 0; i < n; ++i)
      sums[static_cast<size_t>(off[1] + i * st[1])] += static_cast<int32_t>(x[off[0] + i]) - mq.x_zero;
  });
  const int64_t count = std::max<int64_t>(xv.elements() / std::max<int64_t>(yv.elements(), 1), 1);
  Y* y = yv.as<Y>();
  for (size_t i = 0; i < sums.size(); ++i) y[i] = static_cast<Y>(mq(sums[i], count));
}

template <template <typename, typename> class F>
void with_xy(KernelContext& ctx) {
  with_8bit_type(ctx.in(0).dtype, [&](auto xt) {
    with_8bit_type(ctx.out().dtype, [&](auto yt) { F<decltype(xt), decltype(yt)>::run(ctx); });
  });
}
template <typename X, typename Y>
struct AveragePoolRun {
  static void run(KernelContext& ctx) { average_pool_typed<X, Y>(ctx); }
};
template <typename X, typename Y>
struct GlobalAveragePoolRun {
  static void run(KernelContext& ctx) { global_average_pool_typed<X, Y>(ctx); }
};
template <typename X, typename Y>
struct ReduceMeanRun {
  static void run(KernelContext& ctx) { reduce_mean_typed<X, Y>(ctx); }
};

std::string check_unary(const Graph& g, const Node& n) {
  for (auto why : {check_quantized_operand(g, n, 0, false), check_quantized_operand(g, n, 0, true)})
    if (!why.empty()) return why;
  // A 2^31 / 255 element window would overflow the int32 sum.
  const Value& x = g.value(n.inputs[0]);
  int64_t elements = 1;
  for (int64_t d : x.shape) elements *= d;
  if (elements > (int64_t{1} << 23)) return "an integer pool over more than 2^23 elements";
  return {};
}

// Byte-moving integer ops keep their float kernel's run: input and output must agree.
std::string check_same_quantization(const Graph& g, const Node& n) {
  if (auto why = check_unary(g, n); !why.empty()) return why;
  const Value& x = g.value(n.inputs[0]);
  const Value& y = g.value(n.outputs[0]);
  if (x.dtype != y.dtype || *x.quant != *y.quant)
    return fmt::format("integer {} with output '{}' quantized unlike input '{}'", n.op, y.name, x.name);
  return {};
}

}  // namespace

void add_quantized_conv_kernels(KernelTable& t) {
  t.emplace_back(":Conv", Kernel{.check = check_conv, .run = conv});
  t.emplace_back(":AveragePool", Kernel{.check =
                                            [](const Graph& g, const Node& n) {
                                              if (!n.has_attr("kernel_shape")) return std::string("no kernel_shape");
                                              return check_unary(g, n);
                                            },
                                        .run = with_xy<AveragePoolRun>});
  t.emplace_back(":GlobalAveragePool", Kernel{.check = check_unary, .run = with_xy<GlobalAveragePoolRun>});
  t.emplace_back(":ReduceMean", Kernel{.check =
                                           [](const Graph& g, const Node& n) {
                                             if (n.int_attr("noop_with_empty_axes", 0) != 0)
                                               return std::string("an integer ReduceMean with noop_with_empty_axes");
                                             return check_unary(g, n);
                                           },
                                       .run = with_xy<ReduceMeanRun>});
  t.emplace_back(":MaxPool", Kernel{.check =
                                        [](const Graph& g, const Node& n) {
                                          if (n.outputs.size() > 1 && n.outputs[1].valid())
                                            return std::string("the Indices output");
                                          if (!n.has_attr("kernel_shape")) return std::string("no kernel_shape");
                                          return check_same_quantization(g, n);
                                        },
                                    .run = nullptr});
  t.emplace_back(":Resize", Kernel{.check =
                                       [](const Graph& g, const Node& n) {
                                         if (n.string_attr("mode", "nearest") != "nearest")
                                           return std::string("an integer Resize other than nearest");
                                         return check_same_quantization(g, n);
                                       },
                                   .run = nullptr});
}

}  // namespace memledger::exec
