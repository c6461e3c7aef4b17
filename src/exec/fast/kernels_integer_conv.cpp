// The fast integer Conv (ir/integer_node.h): oneDNN's int8 convolution, grouped and
// depthwise, on int8 or uint8 activations quantized per tensor, int8 weights per tensor or
// per output channel with zero point 0 (what onnxruntime's quantizer writes), an int32 bias.
// oneDNN computes the reference kernel's sum exactly (the input's zero point subtracted,
// a tap in the padding counting as that zero point), then (acc + bias) · s_x·s_w[m]/s_y in
// float, the output's zero point added in float, rounded half to even and saturated.
// The reference integer kernel (kernels_quantized_conv.cpp) rounds before it adds the zero
// point, as onnxruntime does: where acc · m lies within a float rounding of a half, the two
// differ by one LSB (1 of 1,944 outputs of a random 3×3 Conv). Taken only where the machine
// has int8 dot products (fast/isa.h) and for the float-scale rule of ONNX models: TFLite's
// fixed-point rule stays with the reference kernels.
#include <algorithm>

#include "exec/fast/isa.h"
#include "exec/fast/kernel_common.h"

namespace memledger::exec::fast {
namespace {

dt integer_type(const Value& v, bool allow_unsigned) {
  if (v.dtype == DType::kInt8) return dt::s8;
  if (v.dtype == DType::kUInt8 && allow_unsigned) return dt::u8;
  not_fast(fmt::format("'{}' is {}", v.name, dtype_name(v.dtype)));
}

}  // namespace

void prepare_integer_conv(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  if (!has_int8_dot_products())
    not_fast("no int8 dot products on this machine: oneDNN's int8 kernels would round (exec/fast/isa.h)");
  if (g.requantization != Requantization::kFloatScale) not_fast("TFLite's fixed-point requantization");
  const Value& xv = in_value(g, n, 0);
  const Value& wv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  const dt x_type = integer_type(xv, true), w_type = integer_type(wv, false), y_type = integer_type(yv, true);
  // The quantization parameters were checked by the reference kernel's check (per tensor for
  // input and output, per tensor or per map for the weights, an int32 bias with zero point 0),
  // which the executor asks before any fast kernel (fast_blocker).
  const Quantization &xq = *xv.quant, &wq = *wv.quant, &yq = *yv.quant;
  if (std::any_of(wq.zero_points.begin(), wq.zero_points.end(), [](int64_t z) { return z != 0; }))
    not_fast("weights with a zero point other than 0");

  const memory::dims x = to_dims(xv.shape), wd = to_dims(wv.shape), y = to_dims(yv.shape);
  if (x.size() < 3 || x.size() > 5 || wd.size() != x.size() || y.size() != x.size()) not_fast("rank");
  const int64_t group = n.int_attr("group", 1), maps = wd[0], cg = wd[1];
  if (group < 1 || x[1] != cg * group || maps % group != 0 || y[1] != maps) not_fast("group");
  const std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
  if (n.has_attr("kernel_shape") && n.ints_attr("kernel_shape") != kernel) not_fast("kernel_shape");
  const Window w = forward_window(n, xv.shape, yv.shape, kernel);

  // The multipliers as the reference kernel computes them: in float, left to right.
  std::vector<float> scales;
  for (int64_t m = 0; m < static_cast<int64_t>(wq.scales.size()); ++m)
    scales.push_back(xq.scale() * wq.scale(m) / yq.scale());
  dnnl::primitive_attr attr = user_scratchpad_attr();
  attr.set_output_scales(scales.size() == 1 ? 0 : 1 << 1, scales);
  if (xq.zero_point() != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {static_cast<int32_t>(xq.zero_point())});
  if (yq.zero_point() != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {static_cast<int32_t>(yq.zero_point())});

  memory::dims wdims = wd;  // [M, C/g, k...] or, grouped, [g, M/g, C/g, k...]
  if (group > 1) {
    wdims[0] = maps / group;
    wdims.insert(wdims.begin(), group);
  }
  const bool src_cl = channels_last(options, n.inputs[0]), dst_cl = channels_last(options, n.outputs[0]);
  const memory src = node.input(0, act_desc(x, src_cl, x_type));
  const memory weights = node.input(1, plain_desc(wdims, w_type));
  const memory dst = node.output(0, act_desc(y, dst_cl, y_type));
  memory bias;
  memory::desc bias_desc;
  if (has_in(n, 2)) {
    bias = node.input(2, plain_desc({maps}, dt::s32));
    bias_desc = bias.get_desc();
  }
  // oneDNN's int8 kernels run on NHWC (or its blocked formats): channels-last activations are
  // given as they are, row-major ones reordered through the workspace.
  auto side = [](const memory& m, const memory::dims& d, dt type, bool cl) {
    return cl ? m.get_desc() : memory::desc(d, type, memory::format_tag::any);
  };
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, algorithm::convolution_direct, side(src, x, x_type, src_cl),
      memory::desc(wdims, w_type, memory::format_tag::any), bias_desc, side(dst, y, y_type, dst_cl), w.strides,
      dnnl_dilations(w.dilations), w.pad_l, w.pad_r);
  const auto pd = usable(dnnl::convolution_forward::primitive_desc(desc, attr, cpu_engine()), /*allow_ref=*/false);
  run_through_workspace(node, dnnl::convolution_forward(pd), pd, src, weights, wv, bias, dst, "int8 conv", options);
}

}  // namespace memledger::exec::fast
