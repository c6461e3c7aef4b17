// TFLite's int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED in the fast set: the exact f32
// convolution of kernels_integer_conv_f32.cpp over the file's own layouts. The activations are
// NHWC as the tensors' shapes say (channels-last bytes, never reordered), the filters OHWI
// (CONV_2D), 1HWO with output channel c · depth_multiplier + m (DEPTHWISE_CONV_2D, one group
// per input channel) and [O, I] (FULLY_CONNECTED, a 1×1 convolution over the input's rows),
// described to oneDNN by their strides. TFLite's padding (ComputePaddingWithOffset), its
// fixed-point multipliers and the fused activation's range are the reference kernels' own
// (exec/tflite/common.h), so the outputs are the reference TFLite kernels', bit for bit.
#include <algorithm>
#include <cmath>

#include "exec/fast/kernel_common.h"
#include "exec/quantized.h"
#include "exec/tflite/common.h"

namespace memledger::exec::fast {
namespace {

// One spatial axis's padding as oneDNN takes it: TFLite's leading pad, and the trailing one
// that makes oneDNN's output extent the declared one (never negative: VALID's leftover input
// is dropped by oneDNN's floor as by TFLite).
void pad_axis(const Node& n, int64_t in, int64_t k, int64_t out, int64_t stride, int64_t dilation, int64_t& pad_l,
              int64_t& pad_r) {
  pad_l = tflite::window_padding(n.string_attr("padding", "SAME"), stride, dilation, in, k, out);
  pad_r = std::max<int64_t>(0, (out - 1) * stride + (k - 1) * dilation + 1 - in - pad_l);
}

}  // namespace

void prepare_tflite_conv(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  const Value& xv = in_value(g, n, 0);
  const Value& wv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  if (xv.dtype != DType::kInt8 || wv.dtype != DType::kInt8 || yv.dtype != DType::kInt8)
    not_fast("a TFLite convolution other than int8");
  if (!wv.is_constant()) not_fast("filters that are not constants");
  // The reference kernel's check (asked first, fast_blocker) took the shapes, the per-tensor
  // activations' quantization and the filter's scales.
  const Quantization& wq = *wv.quant;
  if (std::any_of(wq.zero_points.begin(), wq.zero_points.end(), [](int64_t z) { return z != 0; }))
    not_fast("filters with a zero point other than 0");
  const Shape &xs = xv.shape, &fs = wv.shape, &ys = yv.shape;
  const int8_t* codes = wv.constant->data<int8_t>().data();
  ExactConvSpec spec;
  Window& w = spec.window;
  if (n.op == "FULLY_CONNECTED") {
    const int64_t units = fs[0], depth = fs[1], rows = element_count(xs, xv.name) / depth;
    spec.x = {rows, depth, 1, 1};
    spec.y = {rows, units, 1, 1};
    spec.weights = memory::desc({units, depth, 1, 1}, dt::s8, memory::dims{depth, 1, 1, 1});
    spec.maps = units, spec.group_channels = depth;
    spec.weight_abs.resize(static_cast<size_t>(units * depth));
    for (int64_t i = 0; i < units * depth; ++i) spec.weight_abs[static_cast<size_t>(i)] = std::abs(codes[i]);
    w.kernel = {1, 1}, w.strides = {1, 1}, w.dilations = {1, 1}, w.pad_l = {0, 0}, w.pad_r = {0, 0};
  } else {
    const bool depthwise = n.op == "DEPTHWISE_CONV_2D";
    const int64_t batches = xs[0], in_h = xs[1], in_w = xs[2], channels = xs[3];
    const int64_t out_h = ys[1], out_w = ys[2], out_c = ys[3], k_h = fs[1], k_w = fs[2];
    spec.x = {batches, channels, in_h, in_w};
    spec.y = {batches, out_c, out_h, out_w};
    spec.maps = out_c;
    if (depthwise) {  // [1, kh, kw, O], O = C · multiplier: groups of one input channel
      const int64_t multiplier = out_c / channels;
      spec.group = channels, spec.group_channels = 1;
      spec.weights = memory::desc({channels, multiplier, 1, k_h, k_w}, dt::s8,
                                  memory::dims{multiplier, 1, k_h * k_w * out_c, k_w * out_c, out_c});
      spec.weight_abs.assign(static_cast<size_t>(out_c), 0.0);
      for (int64_t t = 0; t < k_h * k_w; ++t)
        for (int64_t o = 0; o < out_c; ++o) spec.weight_abs[static_cast<size_t>(o)] += std::abs(codes[t * out_c + o]);
    } else {  // OHWI
      spec.group_channels = channels;
      spec.weights = memory::desc({out_c, channels, k_h, k_w}, dt::s8,
                                  memory::dims{k_h * k_w * channels, 1, k_w * channels, channels});
      spec.weight_abs.assign(static_cast<size_t>(out_c * channels), 0.0);
      for (int64_t o = 0; o < out_c; ++o)
        for (int64_t t = 0; t < k_h * k_w; ++t)
          for (int64_t c = 0; c < channels; ++c)
            spec.weight_abs[static_cast<size_t>(o * channels + c)] +=
                std::abs(codes[(o * k_h * k_w + t) * channels + c]);
    }
    const int64_t stride_h = n.int_attr("stride_h", 1), stride_w = n.int_attr("stride_w", 1);
    const int64_t dilation_h = n.int_attr("dilation_h_factor", 1), dilation_w = n.int_attr("dilation_w_factor", 1);
    w.kernel = {k_h, k_w}, w.strides = {stride_h, stride_w}, w.dilations = {dilation_h, dilation_w};
    w.pad_l = {0, 0}, w.pad_r = {0, 0};
    pad_axis(n, in_h, k_h, out_h, stride_h, dilation_h, w.pad_l[0], w.pad_r[0]);
    pad_axis(n, in_w, k_w, out_w, stride_w, dilation_w, w.pad_l[1], w.pad_r[1]);
  }
  const Quantization &xq = *xv.quant, &yq = *yv.quant;
  spec.x_zero = static_cast<int32_t>(xq.zero_point());
  spec.x_range = quant_range(DType::kInt8);
  spec.rule = Requantization::kFixedPoint;
  for (int64_t m = 0; m < (wq.scales.size() == 1 ? 1 : spec.maps); ++m)
    spec.multipliers.push_back(real_multiplier(Requantization::kFixedPoint, xq.scale(), wq.scale(m), yq.scale()));
  spec.y_zero = static_cast<int32_t>(yq.zero_point());
  spec.y_range = tflite::activation_range(tflite::fused_activation(n), {yq.scale(), spec.y_zero}, DType::kInt8);
  spec.src_cl = spec.dst_cl = true;  // NHWC is the tensors' own order
  spec.has_bias = has_in(n, 2);
  prepare_exact_conv(node, g, n, spec, options);
}

}  // namespace memledger::exec::fast
