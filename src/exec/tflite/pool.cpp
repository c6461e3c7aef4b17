// AVERAGE_POOL_2D, MAX_POOL_2D (NHWC) and MEAN. The int8 pools keep the input's
// quantization (TFLite requires the output's to be the same): the average is the sum over
// the window's taps inside the input divided by their count, rounded half away from zero
// as TFLite's reference AveragePool does, then clamped to the fused activation's range.
// MEAN with the input's quantization is TFLite's reference Mean (an int32 sum divided by
// the count, truncating); with another it is QuantizedMeanOrSum's float rescaling.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "exec/tflite/common.h"
#include "exec/tflite/kernels.h"

namespace memledger::exec::tflite {
namespace {

struct PoolWindow {
  int64_t batches, in_h, in_w, channels, out_h, out_w, k_h, k_w, stride_h, stride_w, pad_top, pad_left;
};

PoolWindow pool_window(const KernelContext& ctx) {
  const Node& n = ctx.node;
  const Shape& x = ctx.in(0).shape;
  const Shape& y = ctx.outputs[0].shape;
  PoolWindow w{};
  w.batches = x[0], w.in_h = x[1], w.in_w = x[2], w.channels = x[3], w.out_h = y[1], w.out_w = y[2];
  w.k_h = n.int_attr("filter_height", 1), w.k_w = n.int_attr("filter_width", 1);
  w.stride_h = n.int_attr("stride_h", 1), w.stride_w = n.int_attr("stride_w", 1);
  const std::string padding = n.string_attr("padding", "SAME");
  w.pad_top = window_padding(padding, w.stride_h, 1, w.in_h, w.k_h, w.out_h);
  w.pad_left = window_padding(padding, w.stride_w, 1, w.in_w, w.k_w, w.out_w);
  return w;
}

// Calls f(input offsets of the window's taps, count) for every output element.
template <typename F>
void for_each_window(const PoolWindow& w, F&& f) {
  for (int64_t b = 0; b < w.batches; ++b)
    for (int64_t oy = 0; oy < w.out_h; ++oy)
      for (int64_t ox = 0; ox < w.out_w; ++ox) {
        const int64_t y0 = oy * w.stride_h - w.pad_top, x0 = ox * w.stride_w - w.pad_left;
        const int64_t ky0 = std::max<int64_t>(0, -y0), ky1 = std::min(w.k_h, w.in_h - y0);
        const int64_t kx0 = std::max<int64_t>(0, -x0), kx1 = std::min(w.k_w, w.in_w - x0);
        for (int64_t c = 0; c < w.channels; ++c) {
          const int64_t out = ((b * w.out_h + oy) * w.out_w + ox) * w.channels + c;
          auto taps = [&](auto&& visit) {
            for (int64_t ky = ky0; ky < ky1; ++ky)
              for (int64_t kx = kx0; kx < kx1; ++kx)
                visit(((b * w.in_h + y0 + ky) * w.in_w + x0 + kx) * w.channels + c);
          };
          f(out, taps, std::max<int64_t>(0, ky1 - ky0) * std::max<int64_t>(0, kx1 - kx0));
        }
      }
}

template <bool kMax>
void run_pool(KernelContext& ctx) {
  const PoolWindow w = pool_window(ctx);
  const std::string act = fused_activation(ctx.node);
  if (ctx.in(0).dtype == DType::kFloat32) {
    const float* x = ctx.in(0).as<float>();
    float* y = ctx.out().as<float>();
    for_each_window(w, [&](int64_t out, auto&& taps, int64_t count) {
      float acc = kMax ? std::numeric_limits<float>::lowest() : 0.0f;
      taps([&](int64_t i) { acc = kMax ? std::max(acc, x[i]) : acc + x[i]; });
      y[out] = apply_activation(act, kMax ? acc : acc / static_cast<float>(count));
    });
    return;
  }
  const QuantRange range = activation_range(act, output_quant(ctx), DType::kInt8);
  const int8_t* x = ctx.in(0).as<int8_t>();
  int8_t* y = ctx.out().as<int8_t>();
  for_each_window(w, [&](int64_t out, auto&& taps, int64_t count) {
    int32_t acc = kMax ? std::numeric_limits<int8_t>::lowest() : 0;
    taps([&](int64_t i) { acc = kMax ? std::max<int32_t>(acc, x[i]) : acc + x[i]; });
    if (!kMax) {
      const auto n = static_cast<int32_t>(count);
      acc = acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n;
    }
    y[out] = clamp_to<int8_t>(acc, range);
  });
}

std::string check_pool(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.outputs.empty()) return "needs an input and an output";
  const Value& x = g.value(n.inputs[0]);
  const Value& y = g.value(n.outputs[0]);
  if (x.shape.size() != 4 || y.shape.size() != 4) return "input and output must be 4-D (NHWC)";
  if (x.shape[0] != y.shape[0] || x.shape[3] != y.shape[3]) return "batch and channels must be kept";
  const std::string padding = n.string_attr("padding", "SAME");
  if (padding != "SAME" && padding != "VALID") return fmt::format("padding '{}'", padding);
  for (const char* key : {"stride_h", "stride_w", "filter_height", "filter_width"})
    if (n.int_attr(key, 1) <= 0) return fmt::format("{} must be positive", key);
  for (int axis : {1, 2}) {
    const bool h = axis == 1;
    const int64_t expected = window_out_size(padding, n.int_attr(h ? "stride_h" : "stride_w", 1), 1, x.shape[axis],
                                             n.int_attr(h ? "filter_height" : "filter_width", 1));
    if (expected != y.shape[axis])
      return fmt::format("output {} is {}, TFLite computes {}", h ? "height" : "width", y.shape[axis], expected);
  }
  if (auto why = check_activation(fused_activation(n)); !why.empty()) return why;
  if (x.dtype == DType::kFloat32 && y.dtype == DType::kFloat32) return {};
  if (x.dtype != DType::kInt8 || y.dtype != DType::kInt8)
    return fmt::format("{} input, {} output (int8 or float32 expected)", dtype_name(x.dtype), dtype_name(y.dtype));
  if (auto why = check_per_tensor(g, n, 0, false); !why.empty()) return why;
  if (auto why = check_per_tensor(g, n, 0, true); !why.empty()) return why;
  if (*x.quant != *y.quant) return "an int8 pool needs the output's quantization to be the input's";
  return {};
}

// MEAN: which input axes are reduced (input 1, negative axes counted from the end).
std::vector<bool> reduced_axes(const KernelContext& ctx) {
  const int rank = ctx.in(0).rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : read_ints(ctx.in(1))) reduced[static_cast<size_t>(normalize_axis(ctx.node, a, rank))] = true;
  return reduced;
}

void run_mean(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const std::vector<bool> reduced = reduced_axes(ctx);
  // Output index of every input element: the kept axes in order (keep_dims adds only ones).
  std::vector<int64_t> out_stride(reduced.size(), 0);
  int64_t s = 1, count = 1;
  for (size_t i = reduced.size(); i-- > 0;) {
    if (reduced[i]) {
      count *= x.shape[i];
    } else {
      out_stride[i] = s;
      s *= x.shape[i];
    }
  }
  const int64_t outputs = s;
  std::vector<int64_t> index(reduced.size(), 0);
  auto for_each = [&](auto&& f) {
    const int64_t n = x.elements();
    std::fill(index.begin(), index.end(), 0);
    int64_t out = 0;
    for (int64_t e = 0; e < n; ++e) {
      f(e, out);
      for (size_t a = reduced.size(); a-- > 0;) {
        out += out_stride[a];
        if (++index[a] < x.shape[a]) break;
        out -= out_stride[a] * x.shape[a];
        index[a] = 0;
      }
    }
  };
  if (x.dtype == DType::kFloat32) {
    std::vector<float> sum(static_cast<size_t>(outputs), 0.0f);
    const float* px = x.as<float>();
    for_each([&](int64_t e, int64_t o) { sum[static_cast<size_t>(o)] += px[e]; });
    float* y = ctx.out().as<float>();
    for (int64_t o = 0; o < outputs; ++o) y[o] = sum[static_cast<size_t>(o)] / static_cast<float>(count);
    return;
  }
  std::vector<int32_t> sum(static_cast<size_t>(outputs), 0);
  const int8_t* px = x.as<int8_t>();
  for_each([&](int64_t e, int64_t o) { sum[static_cast<size_t>(o)] += px[e]; });
  const TensorQuant in_q = input_quant(ctx, 0), out_q = output_quant(ctx);
  int8_t* y = ctx.out().as<int8_t>();
  const QuantRange range = type_range(DType::kInt8);
  for (int64_t o = 0; o < outputs; ++o) {
    const int32_t total = sum[static_cast<size_t>(o)];
    if (in_q.scale == out_q.scale && in_q.zero_point == out_q.zero_point) {
      y[o] = clamp_to<int8_t>(total / static_cast<int32_t>(count), range);
    } else {
      const float scale = in_q.scale / out_q.scale;
      const float bias = static_cast<float>(-in_q.zero_point) * scale;
      const float mean = static_cast<float>(total) / static_cast<float>(count);
      const float r = std::round(mean * scale + bias) + static_cast<float>(out_q.zero_point);
      y[o] = static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f));
    }
  }
}

std::string check_mean(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.outputs.empty()) return "needs an input, the axes and an output";
  const Value& x = g.value(n.inputs[0]);
  const Value& axes = g.value(n.inputs[1]);
  const Value& y = g.value(n.outputs[0]);
  if (axes.dtype != DType::kInt32 && axes.dtype != DType::kInt64) return "the axes must be int32";
  if (x.dtype != y.dtype) return "input and output types differ";
  if (x.dtype == DType::kFloat32) return {};
  if (x.dtype != DType::kInt8) return fmt::format("{} input (int8 or float32 expected)", dtype_name(x.dtype));
  if (auto why = check_per_tensor(g, n, 0, false); !why.empty()) return why;
  return check_per_tensor(g, n, 0, true);
}

}  // namespace

void add_pool_kernels(KernelTable& t) {
  t.emplace_back("tflite:AVERAGE_POOL_2D", Kernel{check_pool, run_pool<false>});
  t.emplace_back("tflite:MAX_POOL_2D", Kernel{check_pool, run_pool<true>});
  t.emplace_back("tflite:MEAN", Kernel{check_mean, run_mean});
}

}  // namespace memledger::exec::tflite
