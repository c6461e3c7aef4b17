// CONV_2D and DEPTHWISE_CONV_2D over NHWC activations: TFLite's reference ConvPerChannel
// and DepthwiseConvPerChannel for int8 (int32 accumulation of (x − zp_in) · w, the bias,
// then each output channel's multiplier s_in · s_w[c] / s_out as QuantizeMultiplier makes
// it, MultiplyByQuantizedMultiplier, the output zero point, the fused activation's range),
// and the float kernels. Filters as the file stores them: OHWI for CONV_2D, 1HWO for
// DEPTHWISE_CONV_2D (output channel c = input channel · depth_multiplier + m). Taps outside
// the input are skipped, which is padding with the input's zero point.
#include <vector>

#include "exec/tflite/common.h"
#include "exec/tflite/kernels.h"

namespace memledger::exec::tflite {
namespace {

struct Window {
  int64_t batches, in_h, in_w, in_c, out_h, out_w, out_c, k_h, k_w;
  int64_t stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  int64_t depth_multiplier = 1;  // depthwise only
};

Window window(const KernelContext& ctx, bool depthwise) {
  const Node& n = ctx.node;
  const Shape& x = ctx.in(0).shape;
  const Shape& f = ctx.in(1).shape;
  const Shape& y = ctx.outputs[0].shape;
  Window w{};
  w.batches = x[0], w.in_h = x[1], w.in_w = x[2], w.in_c = x[3];
  w.out_h = y[1], w.out_w = y[2], w.out_c = y[3];
  w.k_h = f[1], w.k_w = f[2];
  w.stride_h = n.int_attr("stride_h", 1), w.stride_w = n.int_attr("stride_w", 1);
  w.dilation_h = n.int_attr("dilation_h_factor", 1), w.dilation_w = n.int_attr("dilation_w_factor", 1);
  const std::string padding = n.string_attr("padding", "SAME");
  w.pad_top = window_padding(padding, w.stride_h, w.dilation_h, w.in_h, w.k_h, w.out_h);
  w.pad_left = window_padding(padding, w.stride_w, w.dilation_w, w.in_w, w.k_w, w.out_w);
  if (depthwise) w.depth_multiplier = n.int_attr("depth_multiplier", 1);
  return w;
}

// Sums f(input index, filter index) over the taps of output pixel (b, oy, ox) and channel oc.
template <typename F>
void for_each_tap(const Window& w, bool depthwise, int64_t b, int64_t oy, int64_t ox, int64_t oc, F&& f) {
  const int64_t in_y0 = oy * w.stride_h - w.pad_top;
  const int64_t in_x0 = ox * w.stride_w - w.pad_left;
  for (int64_t ky = 0; ky < w.k_h; ++ky) {
    const int64_t iy = in_y0 + ky * w.dilation_h;
    if (iy < 0 || iy >= w.in_h) continue;
    for (int64_t kx = 0; kx < w.k_w; ++kx) {
      const int64_t ix = in_x0 + kx * w.dilation_w;
      if (ix < 0 || ix >= w.in_w) continue;
      const int64_t pixel = ((b * w.in_h + iy) * w.in_w + ix) * w.in_c;
      if (depthwise) {
        f(pixel + oc / w.depth_multiplier, (ky * w.k_w + kx) * w.out_c + oc);
      } else {
        const int64_t filter_row = ((oc * w.k_h + ky) * w.k_w + kx) * w.in_c;
        for (int64_t ic = 0; ic < w.in_c; ++ic) f(pixel + ic, filter_row + ic);
      }
    }
  }
}

void run_int8(KernelContext& ctx, bool depthwise) {
  const Window w = window(ctx, depthwise);
  const TensorQuant in_q = input_quant(ctx, 0);
  const TensorQuant out_q = output_quant(ctx);
  const Quantization& f_q = weight_quant(ctx.graph, ctx.node, 1);
  std::vector<FixedPointMultiplier> multipliers(static_cast<size_t>(w.out_c));
  for (int64_t c = 0; c < w.out_c; ++c)
    multipliers[static_cast<size_t>(c)] = quantize_multiplier(real_multiplier(
        Requantization::kFixedPoint, in_q.scale, f_q.scale(f_q.scales.size() == 1 ? 0 : c), out_q.scale));
  const QuantRange range = activation_range(fused_activation(ctx.node), out_q, DType::kInt8);
  const int8_t* x = ctx.in(0).as<int8_t>();
  const int8_t* filter = ctx.in(1).as<int8_t>();
  const int32_t* bias = ctx.has_input(2) ? ctx.in(2).as<int32_t>() : nullptr;
  int8_t* y = ctx.out().as<int8_t>();
  const int32_t input_offset = -in_q.zero_point;
  for (int64_t b = 0; b < w.batches; ++b)
    for (int64_t oy = 0; oy < w.out_h; ++oy)
      for (int64_t ox = 0; ox < w.out_w; ++ox)
        for (int64_t oc = 0; oc < w.out_c; ++oc) {
          int32_t acc = 0;
          for_each_tap(w, depthwise, b, oy, ox, oc, [&](int64_t xi, int64_t fi) {
            acc += (static_cast<int32_t>(x[xi]) + input_offset) * static_cast<int32_t>(filter[fi]);
          });
          if (bias) acc += bias[oc];
          acc = multiply_by_quantized_multiplier(acc, multipliers[static_cast<size_t>(oc)]) + out_q.zero_point;
          y[((b * w.out_h + oy) * w.out_w + ox) * w.out_c + oc] = clamp_to<int8_t>(acc, range);
        }
}

void run_float(KernelContext& ctx, bool depthwise) {
  const Window w = window(ctx, depthwise);
  const std::string act = fused_activation(ctx.node);
  const float* x = ctx.in(0).as<float>();
  const float* filter = ctx.in(1).as<float>();
  const float* bias = ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr;
  float* y = ctx.out().as<float>();
  for (int64_t b = 0; b < w.batches; ++b)
    for (int64_t oy = 0; oy < w.out_h; ++oy)
      for (int64_t ox = 0; ox < w.out_w; ++ox)
        for (int64_t oc = 0; oc < w.out_c; ++oc) {
          float acc = 0.0f;
          for_each_tap(w, depthwise, b, oy, ox, oc, [&](int64_t xi, int64_t fi) { acc += x[xi] * filter[fi]; });
          if (bias) acc += bias[oc];
          y[((b * w.out_h + oy) * w.out_w + ox) * w.out_c + oc] = apply_activation(act, acc);
        }
}

std::string check(const Graph& g, const Node& n, bool depthwise) {
  if (n.inputs.size() < 2 || n.outputs.empty()) return "needs an input, a filter and an output";
  const Value& x = g.value(n.inputs[0]);
  const Value& f = g.value(n.inputs[1]);
  const Value& y = g.value(n.outputs[0]);
  if (x.shape.size() != 4 || f.shape.size() != 4 || y.shape.size() != 4) return "input, filter and output must be 4-D";
  const int64_t out_c = y.shape[3];
  if (depthwise) {
    if (f.shape[0] != 1 || f.shape[3] != out_c) return "the depthwise filter must be [1, H, W, output channels]";
    const int64_t m = n.int_attr("depth_multiplier", 1);
    if (m <= 0 || x.shape[3] * m != out_c) return "output channels must be input channels × depth_multiplier";
  } else {
    if (f.shape[0] != out_c || f.shape[3] != x.shape[3])
      return "the filter must be [output channels, H, W, input channels]";
  }
  for (const char* key : {"stride_h", "stride_w", "dilation_h_factor", "dilation_w_factor"})
    if (n.int_attr(key, 1) <= 0) return fmt::format("{} must be positive", key);
  const std::string padding = n.string_attr("padding", "SAME");
  if (padding != "SAME" && padding != "VALID") return fmt::format("padding '{}'", padding);
  for (int axis : {1, 2}) {
    const bool h = axis == 1;
    const int64_t expected =
        window_out_size(padding, n.int_attr(h ? "stride_h" : "stride_w", 1),
                        n.int_attr(h ? "dilation_h_factor" : "dilation_w_factor", 1), x.shape[axis], f.shape[axis]);
    if (expected != y.shape[axis])
      return fmt::format("output {} is {}, TFLite computes {}", h ? "height" : "width", y.shape[axis], expected);
  }
  if (auto why = check_activation(fused_activation(n)); !why.empty()) return why;
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2].valid();
  if (has_bias && g.value(n.inputs[2]).shape != Shape{out_c}) return "the bias must have one value per output channel";
  if (x.dtype == DType::kFloat32) {
    if (f.dtype != DType::kFloat32 || y.dtype != DType::kFloat32)
      return "a float input needs a float filter and output";
    if (has_bias && g.value(n.inputs[2]).dtype != DType::kFloat32) return "a float conv needs a float bias";
    return {};
  }
  if (x.dtype != DType::kInt8 || f.dtype != DType::kInt8 || y.dtype != DType::kInt8)
    return fmt::format("{} input, {} filter, {} output (int8 or float32 expected)", dtype_name(x.dtype),
                       dtype_name(f.dtype), dtype_name(y.dtype));
  if (has_bias && g.value(n.inputs[2]).dtype != DType::kInt32) return "an int8 conv needs an int32 bias";
  for (auto [i, out] : {std::pair{size_t{0}, false}, std::pair{size_t{0}, true}})
    if (auto why = check_per_tensor(g, n, i, out); !why.empty()) return why;
  if (!f.quant || f.quant->scales.empty()) return "the filter has no quantization";
  if (f.quant->scales.size() != 1 && static_cast<int64_t>(f.quant->scales.size()) != out_c)
    return fmt::format("the filter has {} scales for {} output channels", f.quant->scales.size(), out_c);
  for (int64_t zp : f.quant->zero_points)
    if (zp != 0) return "the int8 filter's zero points must be 0 (TFLite's per-channel convolution)";
  return {};
}

template <bool kDepthwise>
Kernel conv_kernel() {
  return {[](const Graph& g, const Node& n) { return check(g, n, kDepthwise); },
          [](KernelContext& ctx) {
            if (ctx.in(0).dtype == DType::kFloat32)
              run_float(ctx, kDepthwise);
            else
              run_int8(ctx, kDepthwise);
          }};
}

}  // namespace

void add_conv_kernels(KernelTable& t) {
  t.emplace_back("tflite:CONV_2D", conv_kernel<false>());
  t.emplace_back("tflite:DEPTHWISE_CONV_2D", conv_kernel<true>());
}

}  // namespace memledger::exec::tflite
