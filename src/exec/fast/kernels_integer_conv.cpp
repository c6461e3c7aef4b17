// The fast integer Conv and Gemm (ir/integer_node.h): oneDNN's int8 convolution, grouped and
// depthwise, on int8 or uint8 activations quantized per tensor, int8 weights per tensor or
// per output channel with zero point 0 (what onnxruntime's quantizer writes), an int32 bias.
// oneDNN computes the reference kernel's sum exactly (the input's zero point subtracted,
// a tap in the padding counting as that zero point), then (acc + bias) · s_x·s_w[m]/s_y in
// float, the output's zero point added in float, rounded half to even and saturated.
// That is the reference integer kernel's rule (requantize.h), so the two give the same
// integers. Taken only where the machine has int8 dot products (fast/isa.h) and for the float-scale rule of ONNX
// models; elsewhere (and under TFLite's fixed-point rule) the Conv runs as an exact f32 convolution with the
// reference's rounding (kernels_integer_conv_f32.cpp). A Gemm is the same convolution (int8
// or exact f32), one wide, over the rows of its A (prepare_integer_gemm).
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

// Whether oneDNN's int8 product gives the reference kernel's integers: it needs int8 dot
// products (without them oneDNN halves signed weights) and the float-scale rule.
bool int8_product_exact(const Graph& g) {
  return has_int8_dot_products() && g.requantization == Requantization::kFloatScale;
}

// The multipliers as the reference kernel computes them: in float, left to right.
std::vector<float> output_scales(const Quantization& xq, const Quantization& wq, const Quantization& yq) {
  if (std::any_of(wq.zero_points.begin(), wq.zero_points.end(), [](int64_t z) { return z != 0; }))
    not_fast("weights with a zero point other than 0");
  std::vector<float> scales;
  for (int64_t m = 0; m < static_cast<int64_t>(wq.scales.size()); ++m)
    scales.push_back(xq.scale() * wq.scale(m) / yq.scale());
  return scales;
}

// The attributes of an int8 product: per-map (or one) output scales on dimension 1, the
// source's and destination's zero points.
dnnl::primitive_attr integer_attr(const Quantization& xq, const Quantization& wq, const Quantization& yq) {
  const std::vector<float> scales = output_scales(xq, wq, yq);
  dnnl::primitive_attr attr = user_scratchpad_attr();
  attr.set_output_scales(scales.size() == 1 ? 0 : 1 << 1, scales);
  if (xq.zero_point() != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {static_cast<int32_t>(xq.zero_point())});
  if (yq.zero_point() != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {static_cast<int32_t>(yq.zero_point())});
  return attr;
}

}  // namespace

IntegerConvGeometry integer_conv_geometry(const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const Value& wv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  IntegerConvGeometry geo;
  geo.x = to_dims(xv.shape);
  geo.y = to_dims(yv.shape);
  const memory::dims wd = to_dims(wv.shape);
  const memory::dims& x = geo.x;
  if (x.size() < 3 || x.size() > 5 || wd.size() != x.size() || geo.y.size() != x.size()) not_fast("rank");
  geo.group = n.int_attr("group", 1), geo.maps = wd[0], geo.group_channels = wd[1];
  if (geo.group < 1 || x[1] != geo.group_channels * geo.group || geo.maps % geo.group != 0 || geo.y[1] != geo.maps)
    not_fast("group");
  const std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
  if (n.has_attr("kernel_shape") && n.ints_attr("kernel_shape") != kernel) not_fast("kernel_shape");
  geo.window = forward_window(n, xv.shape, yv.shape, kernel);
  geo.weights = wd;
  if (geo.group > 1) {
    geo.weights[0] = geo.maps / geo.group;
    geo.weights.insert(geo.weights.begin(), geo.group);
  }
  return geo;
}

void prepare_integer_conv(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  if (!int8_product_exact(g)) {
    prepare_integer_conv_f32(node, g, n, options);  // exact sums in float, the reference's rounding
    return;
  }
  const Value& xv = in_value(g, n, 0);
  const Value& wv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  const dt x_type = integer_type(xv, true), w_type = integer_type(wv, false), y_type = integer_type(yv, true);
  // The quantization parameters were checked by the reference kernel's check (per tensor for
  // input and output, per tensor or per map for the weights, an int32 bias with zero point 0),
  // which the executor asks before any fast kernel (fast_blocker).
  const dnnl::primitive_attr attr = integer_attr(*xv.quant, *wv.quant, *yv.quant);

  const IntegerConvGeometry geo = integer_conv_geometry(g, n);
  const memory::dims &x = geo.x, &y = geo.y, &wdims = geo.weights;
  const int64_t maps = geo.maps;
  const Window& w = geo.window;
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

// An integer Gemm y[M, N] = A[M, K]·B (+ C) as a one-wide int8 convolution over the rows, as
// the float Gemm's add_matmul_as_conv: A's rows are the source's M positions (nwc: a row is
// a position's K channels), y's rows the destination's, B's N columns the maps (weights
// quantized per column or per tensor); multipliers, zero points and the int32 bias C as the
// integer Conv's. transA is refused (the quantizer never writes it).
IntegerGemmShape integer_gemm_shape(const Graph& g, const Node& n) {
  const Value& av = in_value(g, n, 0);
  const Value& bv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  if (n.int_attr("transA", 0) != 0) not_fast("transA");
  if (av.shape.size() != 2 || bv.shape.size() != 2 || yv.shape.size() != 2) not_fast("rank");
  IntegerGemmShape s{.M = yv.shape[0], .N = yv.shape[1], .K = av.shape[1], .trans_b = n.int_attr("transB", 0) != 0};
  if (av.shape[0] != s.M || bv.shape != (s.trans_b ? Shape{s.N, s.K} : Shape{s.K, s.N})) not_fast("operand extents");
  if (has_in(n, 2) && element_count(in_value(g, n, 2).shape, in_value(g, n, 2).name) != s.N)
    not_fast("C other than a row of biases");
  return s;
}

void prepare_integer_gemm(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  if (!int8_product_exact(g)) {
    prepare_integer_gemm_f32(node, g, n, options);  // exact sums in float, the reference's rounding
    return;
  }
  const Value& av = in_value(g, n, 0);
  const Value& bv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  const dt a_type = integer_type(av, true), b_type = integer_type(bv, false), y_type = integer_type(yv, true);
  const auto [M, N, K, tb] = integer_gemm_shape(g, n);
  const dnnl::primitive_attr attr = integer_attr(*av.quant, *bv.quant, *yv.quant);
  const memory src = node.input(0, memory::desc({1, K, M}, a_type, memory::dims{M * K, 1, K}));
  const memory weights =
      node.input(1, memory::desc({N, K, 1}, b_type, tb ? memory::dims{K, 1, 1} : memory::dims{1, N, 1}));
  const memory dst = node.output(0, memory::desc({1, N, M}, y_type, memory::dims{M * N, 1, N}));
  memory bias;
  memory::desc bias_desc;
  if (has_in(n, 2)) {
    bias = node.input(2, plain_desc({N}, dt::s32));
    bias_desc = bias.get_desc();
  }
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm::convolution_direct,
                                             src.get_desc(), memory::desc({N, K, 1}, b_type, memory::format_tag::any),
                                             bias_desc, dst.get_desc(), {1}, {0}, {0}, {0});
  const auto pd = usable(dnnl::convolution_forward::primitive_desc(desc, attr, cpu_engine()), /*allow_ref=*/false);
  run_through_workspace(node, dnnl::convolution_forward(pd), pd, src, weights, bv, bias, dst, "int8 gemm as conv",
                        options);
}

}  // namespace memledger::exec::fast
