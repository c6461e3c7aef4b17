// Convolution and pooling over 1-, 2- and 3-D spatial axes (1-D and 2-D are 3-D with unit
// leading axes). Conv lowers each (image, group) to GEMMs: weights [M/g, C/g·kvol] times an
// im2col matrix [C/g·kvol, out positions] built in the kernel's declared workspace, a block
// of output rows at a time, so the workspace stays near kIm2colBlockBytes whatever the image
// size (a whole-image im2col was resnet18's peak: 7.4 MB for its first Conv). No workspace
// when none is needed: a 1×1 stride-1 unpadded Conv multiplies the input itself, and a Conv
// with one input channel per group and several maps per channel runs directly.
// A depthwise Conv (group = input channels = output channels) may write its output over its
// input (TinyEngine's in-place depthwise, issue 13; the op table's Conv contract): it
// computes each output plane into a workspace of one plane, then copies it to the output,
// channel by channel in ascending order. Output plane m starts at or before input plane m
// when planes do not grow, so the copy only covers input planes already consumed; the kernel
// always takes this path, so the declared workspace is the one it uses, in place or not.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "gemm.h"
#include "kernel.h"
#include "memledger/ir/window.h"
#include "pool_sum.h"

namespace memledger::exec {
namespace {

// im2col for one image and group, output rows [row_begin, row_end):
// col[(c, kd, kh, kw), (od, oh, ow)] with (od, oh) inside the block.
void im2col(const float* x, int64_t channels, const Window& w, int64_t row_begin, int64_t row_end, float* col) {
  const int64_t P = (row_end - row_begin) * w.out[2];
  float* row = col;
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = x + c * w.in_size();
    for (int64_t kd = 0; kd < w.k[0]; ++kd)
      for (int64_t kh = 0; kh < w.k[1]; ++kh)
        for (int64_t kw = 0; kw < w.k[2]; ++kw, row += P) {
          int64_t d_lo, d_hi, h_lo, h_hi, w_lo, w_hi;
          valid_range(w.in[0], w.out[0], w.stride[0], w.pad_begin[0], kd * w.dilation[0], d_lo, d_hi);
          valid_range(w.in[1], w.out[1], w.stride[1], w.pad_begin[1], kh * w.dilation[1], h_lo, h_hi);
          valid_range(w.in[2], w.out[2], w.stride[2], w.pad_begin[2], kw * w.dilation[2], w_lo, w_hi);
          float* dst = row;
          for (int64_t r = row_begin; r < row_end; ++r, dst += w.out[2]) {
            const int64_t od = r / w.out[1], oh = r % w.out[1];
            if (od < d_lo || od >= d_hi || oh < h_lo || oh >= h_hi) {
              std::fill(dst, dst + w.out[2], 0.0f);
              continue;
            }
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
            const float* src = plane + (id * w.in[1] + ih) * w.in[2] - w.pad_begin[2] + kw * w.dilation[2];
            std::fill(dst, dst + w_lo, 0.0f);
            if (w.stride[2] == 1) {
              if (w_hi > w_lo) std::memcpy(dst + w_lo, src + w_lo, static_cast<size_t>(w_hi - w_lo) * sizeof(float));
            } else {
              for (int64_t ow = w_lo; ow < w_hi; ++ow) dst[ow] = src[ow * w.stride[2]];
            }
            std::fill(dst + w_hi, dst + w.out[2], 0.0f);
          }
        }
  }
}

// One input channel per group: each output map is a sum of one input channel's taps.
// Tap by tap, a whole output row gains weight × the input row under it (only over the
// output positions where that tap lands inside the input), so the inner loop is a
// vectorisable axpy; every output sums bias, then its valid taps in (kd, kh, kw) order.
// With `plane_workspace`, each output plane is computed there and then copied to its place
// in y (the depthwise path, where y may share x's bytes).
void conv_direct(const ConvShape& s, const float* x, const float* wt, const float* bias, float* y,
                 float* plane_workspace) {
  const Window& w = s.w;
  const int64_t kvol = w.k_size();
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t m = 0; m < s.maps; ++m) {
      const int64_t c = m / s.mg;
      const float* plane = x + (n * s.channels + c) * w.in_size();
      const float* filter = wt + m * kvol;
      float* target = y + (n * s.maps + m) * w.out_size();
      float* out = plane_workspace ? plane_workspace : target;
      std::fill(out, out + w.out_size(), bias ? bias[m] : 0.0f);
      for (int64_t od = 0; od < w.out[0]; ++od)
        for (int64_t oh = 0; oh < w.out[1]; ++oh) {
          float* row = out + (od * w.out[1] + oh) * w.out[2];
          for (int64_t kd = 0; kd < w.k[0]; ++kd) {
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            if (id < 0 || id >= w.in[0]) continue;
            for (int64_t kh = 0; kh < w.k[1]; ++kh) {
              const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
              if (ih < 0 || ih >= w.in[1]) continue;
              const float* src = plane + (id * w.in[1] + ih) * w.in[2];
              const float* f = filter + (kd * w.k[1] + kh) * w.k[2];
              for (int64_t kw = 0; kw < w.k[2]; ++kw) {
                int64_t lo, hi;
                valid_range(w.in[2], w.out[2], w.stride[2], w.pad_begin[2], kw * w.dilation[2], lo, hi);
                const float fk = f[kw];
                const float* shifted = src - w.pad_begin[2] + kw * w.dilation[2];
                if (w.stride[2] == 1) {
                  for (int64_t ow = lo; ow < hi; ++ow) row[ow] += fk * shifted[ow];
                } else {
                  for (int64_t ow = lo; ow < hi; ++ow) row[ow] += fk * shifted[ow * w.stride[2]];
                }
              }
            }
          }
        }
      if (plane_workspace) std::memcpy(target, plane_workspace, static_cast<size_t>(w.out_size()) * sizeof(float));
    }
}

void conv(KernelContext& ctx) {
  const ConvShape s = conv_shape(ctx.graph, ctx.node);
  const float* x = ctx.in(0).as<float>();
  const float* wt = ctx.in(1).as<float>();
  const float* bias = ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr;
  if (bias && ctx.in(2).elements() != s.maps)
    fail("node {}: bias has {} values for {} maps", ctx.node.label(), ctx.in(2).elements(), s.maps);
  float* y = ctx.out().as<float>();
  if (s.depthwise()) {
    ML_CHECK(static_cast<int64_t>(ctx.workspace.size()) >= s.w.out_size() * static_cast<int64_t>(sizeof(float)),
             "node {}: the depthwise workspace holds less than one output plane", ctx.node.label());
    return conv_direct(s, x, wt, bias, y, reinterpret_cast<float*>(ctx.workspace.data()));
  }
  if (s.direct()) return conv_direct(s, x, wt, bias, y, nullptr);
  const int64_t P = s.w.out_size(), K = s.cg * s.w.k_size();
  float* col = reinterpret_cast<float*>(ctx.workspace.data());
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t grp = 0; grp < s.group; ++grp) {
      const float* xg = x + (n * s.channels + grp * s.cg) * s.w.in_size();
      float* yg = y + (n * s.maps + grp * s.mg) * P;
      for (int64_t m = 0; m < s.mg; ++m) std::fill(yg + m * P, yg + (m + 1) * P, bias ? bias[grp * s.mg + m] : 0.0f);
      if (s.w.is_pointwise()) {
        gemm(s.mg, P, K, wt + grp * s.mg * K, K, 1, xg, P, 1, yg, P, /*accumulate=*/true);
        continue;
      }
      const int64_t rows = s.w.out[0] * s.w.out[1], block = im2col_block_rows(s.w, K);
      for (int64_t r = 0; r < rows; r += block) {
        const int64_t r_end = std::min(rows, r + block), columns = (r_end - r) * s.w.out[2];
        im2col(xg, s.cg, s.w, r, r_end, col);
        gemm(s.mg, columns, K, wt + grp * s.mg * K, K, 1, col, columns, 1, yg + r * s.w.out[2], P,
             /*accumulate=*/true);
      }
    }
}

// ---- pooling ----

Window pool_window(const Graph& g, const Node& node) {
  const Shape& x = g.value(node.inputs.at(0)).shape;
  return window(node, x, g.value(node.outputs.at(0)).shape, node.ints_attr("kernel_shape"));
}

template <typename T, bool kMax>
void pool(KernelContext& ctx) {
  const Window w = pool_window(ctx.graph, ctx.node);
  const bool include_pad = ctx.node.int_attr("count_include_pad", 0) != 0;
  const T* x = ctx.in(0).as<T>();
  T* y = ctx.out().as<T>();
  const int64_t planes = ctx.in(0).shape[0] * ctx.in(0).shape[1];
  for (int64_t p = 0; p < planes; ++p) {
    const T* plane = x + p * w.in_size();
    T* out = y + p * w.out_size();
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow) {
          const int64_t o[3] = {od, oh, ow};
          double sum = 0;
          T best = std::numeric_limits<T>::lowest();
          int64_t inside = 0, padded = 1;
          for (int a = 0; a < kMaxSpatial; ++a) {
            // Window positions inside the padded input count for count_include_pad.
            int64_t in_pad = 0;
            for (int64_t kk = 0; kk < w.k[a]; ++kk) {
              const int64_t i = o[a] * w.stride[a] - w.pad_begin[a] + kk * w.dilation[a];
              if (i < w.in[a] + w.pad_end[a]) ++in_pad;
            }
            padded *= in_pad;
          }
          for (int64_t kd = 0; kd < w.k[0]; ++kd) {
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            if (id < 0 || id >= w.in[0]) continue;
            for (int64_t kh = 0; kh < w.k[1]; ++kh) {
              const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
              if (ih < 0 || ih >= w.in[1]) continue;
              for (int64_t kw = 0; kw < w.k[2]; ++kw) {
                const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
                if (iw < 0 || iw >= w.in[2]) continue;
                const T v = plane[(id * w.in[1] + ih) * w.in[2] + iw];
                ++inside;
                if constexpr (kMax)
                  best = std::max(best, v);
                else
                  sum += v;
              }
            }
          }
          T result;
          if constexpr (kMax)
            result = best;
          else
            result = static_cast<T>(sum / static_cast<double>(include_pad ? padded : std::max<int64_t>(inside, 1)));
          out[(od * w.out[1] + oh) * w.out[2] + ow] = result;
        }
  }
}

template <bool kMax>
void global_pool(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const int64_t planes = x.shape.at(0) * x.shape.at(1);
  const int64_t size = planes == 0 ? 0 : x.elements() / planes;
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  for (int64_t p = 0; p < planes; ++p) {
    const float* v = px + p * size;
    if constexpr (kMax) {
      float best = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < size; ++i) best = std::max(best, v[i]);
      py[p] = best;
    } else {
      py[p] = plane_mean(add_plane(0, v, size), size);
    }
  }
}

std::string check_pool(const Graph& g, const Node& n, bool max) {
  if (n.outputs.size() > 1 && n.outputs[1].valid()) return "the Indices output";
  if (!n.has_attr("kernel_shape")) return "no kernel_shape";
  if (max) return check_dtypes(g, n, 0, {DType::kFloat32, DType::kInt8, DType::kUInt8});
  return check_float_inputs(g, n, {0});
}

}  // namespace

void add_conv_kernels(KernelTable& t) {
  t.emplace_back(":Conv", Kernel{
                              .check =
                                  [](const Graph& g, const Node& n) {
                                    return check_float_inputs(g, n, {0, 1, 2});
                                  },
                              .run = conv,
                          });
  t.emplace_back(":MaxPool", Kernel{
                                 .check = [](const Graph& g, const Node& n) { return check_pool(g, n, true); },
                                 .run =
                                     [](KernelContext& ctx) {
                                       switch (ctx.in(0).dtype) {
                                         case DType::kInt8:
                                           return pool<int8_t, true>(ctx);
                                         case DType::kUInt8:
                                           return pool<uint8_t, true>(ctx);
                                         default:
                                           return pool<float, true>(ctx);
                                       }
                                     },
                             });
  t.emplace_back(":AveragePool", Kernel{
                                     .check = [](const Graph& g, const Node& n) { return check_pool(g, n, false); },
                                     .run = pool<float, false>,
                                 });
  t.emplace_back(":GlobalAveragePool",
                 Kernel{
                     .check = [](const Graph& g, const Node& n) { return check_float_inputs(g, n, {0}); },
                     .run = global_pool<false>,
                 });
  t.emplace_back(":GlobalMaxPool",
                 Kernel{
                     .check = [](const Graph& g, const Node& n) { return check_float_inputs(g, n, {0}); },
                     .run = global_pool<true>,
                 });
}

}  // namespace memledger::exec
