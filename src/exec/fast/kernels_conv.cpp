// The fast Conv and ConvTranspose (oneDNN convolution and deconvolution): grouped and
// depthwise, Winograd where it pays, pointwise ones as matrix products, an activation after
// the Conv as its post-op (PrepareOptions::fuse; a SiLU as the fast set's own loop after the
// primitive, fast/silu.h). Activations are row-major NCHW or channels-last NHWC
// (fast/layout.h); where a primitive prefers another format, the input, weights and output
// are reordered through workspace regions the contract declares.
#include <algorithm>

#include "exec/fast/kernel_common.h"
#include "exec/fast/silu.h"

namespace memledger::exec::fast {
namespace {

// A Conv's attributes: user scratchpad, and its activation as a post-op where it fuses. A
// SiLU is not oneDNN's post-op where the fast set's own loop runs (fast/silu.h: faster than
// oneDNN's swish, even as a second pass over the output): `silu_after` says the node applies
// it over its output after the Conv.
dnnl::primitive_attr conv_attr(const Graph& g, const Node& conv, const PrepareOptions& options, bool& fused,
                               bool& silu_after) {
  dnnl::primitive_attr attr = user_scratchpad_attr();
  fused = silu_after = false;
  if (!options.fuse) return attr;
  if (const PostOp post = fusable_activation(g, conv); post.node) {
    const Activation& a = post.activation;
    fused = true;
    if (a.alg == algorithm::eltwise_swish && silu_available()) {
      silu_after = true;
      return attr;
    }
    dnnl::post_ops ops;
    append_activation(ops, a);
    attr.set_post_ops(ops);
  }
  return attr;
}

// A pointwise Conv (1×1 window, stride 1, no padding, one group) on row-major NCHW is a
// matrix product, W[M, C] × X[C, H·W] (one image), with no layout change at all: run as
// oneDNN's matmul it needs neither the input's nor the output's reorder (the activations
// are B, copied into oneDNN's blocks inside its scratchpad), then the bias per row.
bool prepare_pointwise_as_matmul(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const memory::dims x = all_f32_dims(xv), wd = all_f32_dims(in_value(g, n, 1)), y = all_f32_dims(out_value(g, n));
  const int64_t maps = wd[0], channels = x[1];
  int64_t positions = 1;
  for (size_t i = 2; i < x.size(); ++i) positions *= x[i];
  if (x[0] != 1) not_fast("batch over 1");
  const memory A = node.input(1, plain_desc({maps, channels}, dt::f32));
  const memory B = node.input(0, plain_desc({channels, positions}, dt::f32));
  const memory Y = node.output(0, plain_desc({maps, positions}, dt::f32));
  const dnnl::matmul::desc desc(A.get_desc(), B.get_desc(), Y.get_desc());
  const auto pd = usable(dnnl::matmul::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()), false);
  Args args{{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, B}, {DNNL_ARG_DST, Y}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::matmul(pd), std::move(args), std::string("pointwise matmul ") + pd.impl_info_str());
  if (has_in(n, 2)) {  // oneDNN's matmul takes a bias per column only: one per row is added after
    const memory bias = node.input(2, plain_desc({maps, 1}, dt::f32));
    const dnnl::binary::desc add(algorithm::binary_add, Y.get_desc(), bias.get_desc(), Y.get_desc());
    const auto bpd = usable(dnnl::binary::primitive_desc(add, user_scratchpad_attr(), cpu_engine()), false);
    Args bargs{{DNNL_ARG_SRC_0, Y}, {DNNL_ARG_SRC_1, bias}, {DNNL_ARG_DST, Y}};
    if (memory pad = node.scratchpad(bpd)) bargs.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
    node.add_step(dnnl::binary(bpd), std::move(bargs), std::string("bias ") + bpd.impl_info_str());
  }
  return true;
}

// A pointwise Conv on channels-last activations is X[N·H·W, C] × Wᵀ[C, M] + bias, the
// layout oneDNN's matmul takes directly (bias per column, weights reordered once).
void prepare_pointwise_channels_last(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options,
                                     const dnnl::primitive_attr& attr) {
  const memory::dims x = all_f32_dims(in_value(g, n, 0)), wd = all_f32_dims(in_value(g, n, 1));
  const int64_t maps = wd[0], channels = x[1], rows = x[0] * x[2] * x[3];
  const memory A = node.input(0, plain_desc({rows, channels}, dt::f32));
  const memory B = node.input(1, strided_desc({channels, maps}, {1, channels}));
  const memory bias = has_in(n, 2) ? node.input(2, plain_desc({1, maps}, dt::f32)) : memory();
  const memory Y = node.output(0, plain_desc({rows, maps}, dt::f32));
  const Value& wv = in_value(g, n, 1);
  add_matmul(node, A, B, bias, Y, attr, wv.is_constant() ? &wv : nullptr, options);
}

}  // namespace

// Conv, ConvTranspose and the integer Conv share the layout work: the primitive descriptor
// with every format left to oneDNN, then reorders where its choice differs from the plain
// buffers.
void run_through_workspace(DnnlNode& node, const dnnl::primitive& primitive, const dnnl::primitive_desc_base& pd,
                           const memory& src, const memory& weights, const Value& weights_value, const memory& bias,
                           const memory& dst, const std::string& what, const PrepareOptions& options) {
  const memory src_in = node.reordered(src, pd.src_desc(0));
  const memory weights_in = weights_value.is_constant()
                                ? node.constant_reordered(weights, *weights_value.constant, pd.weights_desc(0), options)
                                : node.reordered(weights, pd.weights_desc(0));
  const bool dst_direct = pd.dst_desc(0) == dst.get_desc();
  const memory dst_out = dst_direct ? dst : node.workspace(pd.dst_desc(0));
  Args args{{DNNL_ARG_SRC, src_in}, {DNNL_ARG_WEIGHTS, weights_in}, {DNNL_ARG_DST, dst_out}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, bias);
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(primitive, std::move(args), what + " " + pd.impl_info_str());
  if (!dst_direct) node.reorder_step(dst_out, dst);
  // An output over the input is safe while one of them is a workspace copy.
  if (src_in.get() != src.get() || !dst_direct) node.set_keeps_in_place_promise();
}

void prepare_conv(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  const Value& xv = in_value(g, n, 0);
  const Value& wv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  const memory::dims x = all_f32_dims(xv), wd = all_f32_dims(wv), y = all_f32_dims(yv);
  if (x.size() < 3 || x.size() > 5 || wd.size() != x.size()) not_fast("rank");
  const int64_t group = n.int_attr("group", 1), maps = wd[0], cg = wd[1];
  if (group < 1 || x[1] != cg * group || maps % group != 0 || y[1] != maps) not_fast("group");
  const std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
  if (n.has_attr("kernel_shape") && n.ints_attr("kernel_shape") != kernel) not_fast("kernel_shape");
  const Window w = forward_window(n, xv.shape, yv.shape, kernel);
  const bool pointwise = group == 1 && std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k == 1; }) &&
                         std::all_of(w.strides.begin(), w.strides.end(), [](int64_t v) { return v == 1; }) &&
                         std::all_of(w.pad_l.begin(), w.pad_l.end(), [](int64_t v) { return v == 0; }) &&
                         std::all_of(w.pad_r.begin(), w.pad_r.end(), [](int64_t v) { return v == 0; });
  const bool src_cl = channels_last(options, n.inputs[0]), dst_cl = channels_last(options, n.outputs[0]);
  bool fused = false, silu_after = false;
  const dnnl::primitive_attr attr = conv_attr(g, n, options, fused, silu_after);
  auto finish = [&](DnnlNode& trial) {
    if (fused) trial.set_fused();
    if (silu_after) trial.set_silu(-1, element_count(yv.shape, yv.name));
  };
  // A 1×1 activation (a squeeze-and-excitation block's) is the same bytes in either order:
  // rows of channels, as channels-last ones are.
  const bool one_position = x.size() == 4 && x[2] == 1 && x[3] == 1;
  if (pointwise && src_cl == dst_cl && (!has_in(n, 2) || all_f32_dims(in_value(g, n, 2)) == memory::dims{maps})) {
    DnnlNode trial;
    try {
      if (src_cl || one_position) {
        prepare_pointwise_channels_last(trial, g, n, options, attr);
        finish(trial);
        node = std::move(trial);
        return;
      }
      if (!fused && prepare_pointwise_as_matmul(trial, g, n)) {
        node = std::move(trial);
        return;
      }
    } catch (const NotFast&) {
    } catch (const dnnl::error&) {
    }  // then the general path below
  }

  memory::dims wdims = wd;  // [M, C/g, k...] or, grouped, [g, M/g, C/g, k...]
  if (group > 1) {
    wdims[0] = maps / group;
    wdims.insert(wdims.begin(), group);
  }
  if (has_in(n, 2) && all_f32_dims(in_value(g, n, 2)) != memory::dims{maps}) not_fast("bias size");
  auto any = [](const memory::dims& d) { return memory::desc(d, dt::f32, memory::format_tag::any); };
  // Channels-last activations are given to oneDNN as they are, so it picks a kernel for
  // NHWC and nothing is reordered (mode 0: both sides as held; 1: the row-major side left
  // to oneDNN, reordered through the workspace: oneDNN's NCHW-input kernels are slow, 6.6 ms
  // for mobilenet_v2's first Conv against 0.2 ms for reordering its 3-channel input); mode
  // 2 leaves every format to oneDNN.
  // Mode 3 first: Winograd (oneDNN's F(2×2,3×3) and F(4×4,3×3) on nChw16c, the activations
  // reordered through the workspace) for a dense 3×3 Conv, stride 1, over at least 27×27
  // outputs, with prepacked weights of at most 1 MiB: squeezenet1_0's expand Convs 0.79 →
  // 0.52 ms (54×54, reorders included), resnet18's 28×28 ones 1.6×; below 27×27 it was
  // slower (13×13: 0.22 against 0.20 ms). The transformed weights are 1.8–4× the originals:
  // held prepacked, larger ones would cost more memory than they save time (resnet18's 7×7
  // and 14×14 layers: 33 MB more; vgg16's 2.4–9.4 MB layers four times that), and
  // transformed on every run (no prepacking) they would need that much workspace. The
  // choice must not depend on prepacking: `run --arena` compares a run without it against
  // an arena run with it, bit for bit.
  std::vector<int> modes;
  const bool wino = group == 1 && kernel == std::vector<int64_t>{3, 3} && w.strides == memory::dims{1, 1} &&
                    w.dilations == memory::dims{1, 1} && y.size() == 4 && y[2] * y[3] >= 27 * 27 && wv.is_constant() &&
                    maps * cg * 9 * 4 <= (int64_t{1} << 20);
  if (wino) modes.push_back(3);
  for (int mode = src_cl && dst_cl ? 0 : (src_cl || dst_cl ? 1 : 2); mode <= 2; ++mode) modes.push_back(mode);
  for (const int mode : modes) {
    const bool last = mode == modes.back();
    DnnlNode trial;
    try {
      const memory src = trial.input(0, act_desc(x, src_cl));
      const memory weights = trial.input(1, plain_desc(wdims, dt::f32));
      const memory dst = trial.output(0, act_desc(y, dst_cl));
      memory bias;
      memory::desc bias_any;
      if (has_in(n, 2)) {
        bias = trial.input(2, plain_desc({maps}, dt::f32));
        bias_any = bias.get_desc();
      }
      auto side = [&](const memory& m, const memory::dims& d, bool cl) {
        return mode == 0 || (mode == 1 && cl) ? m.get_desc() : any(d);
      };
      const dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          mode == 3 ? algorithm::convolution_winograd : algorithm::convolution_direct, side(src, x, src_cl), any(wdims),
          bias_any, side(dst, y, dst_cl), w.strides, dnnl_dilations(w.dilations), w.pad_l, w.pad_r);
      const auto pd = usable(dnnl::convolution_forward::primitive_desc(desc, attr, cpu_engine()),
                             /*allow_ref=*/false);
      // Winograd's tiles (its scratchpad) and the blocked copies of the activations, which
      // grow with the image: at most 16 MiB (vgg's 224×224 layers would need 60–100 MB).
      // Counted without the weights, so that the choice is the same with prepacking or not.
      if (mode == 3 &&
          pd.scratchpad_desc().get_size() + pd.src_desc().get_size() + pd.dst_desc().get_size() > (size_t{16} << 20))
        not_fast("Winograd's workspace over 16 MiB");
      run_through_workspace(trial, dnnl::convolution_forward(pd), pd, src, weights, wv, bias, dst, "conv", options);
      finish(trial);
      node = std::move(trial);
      return;
    } catch (const NotFast&) {
      if (last) throw;
    } catch (const dnnl::error&) {
      if (last) throw;
    }
  }
}

void prepare_conv_transpose(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  const Value& xv = in_value(g, n, 0);
  const Value& wv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  const memory::dims x = all_f32_dims(xv), wd = all_f32_dims(wv), y = all_f32_dims(yv);
  if (x.size() < 3 || x.size() > 5 || wd.size() != x.size()) not_fast("rank");
  const int64_t group = n.int_attr("group", 1);
  const int64_t cin = wd[0], mg = wd[1], maps = mg * group;
  if (group < 1 || x[1] != cin || cin % group != 0 || y[1] != maps) not_fast("group");
  const size_t spatial = x.size() - 2;
  const std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
  if (n.has_attr("kernel_shape") && n.ints_attr("kernel_shape") != kernel) not_fast("kernel_shape");
  Window w;
  w.kernel = kernel;
  w.strides = sized_attr(n, "strides", 1, spatial);
  w.dilations = sized_attr(n, "dilations", 1, spatial);
  const auto pads = sized_attr(n, "pads", 0, 2 * spatial);
  const auto out_pad = sized_attr(n, "output_padding", 0, spatial);
  const std::string auto_pad = n.string_attr("auto_pad", "NOTSET");
  const bool derived = n.has_attr("output_shape") || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && !derived) not_fast("auto_pad " + auto_pad);
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t ext = (kernel[i] - 1) * w.dilations[i] + 1;
    const int64_t full = (x[2 + i] - 1) * w.strides[i] + ext;  // output extent without padding
    int64_t pl = auto_pad == "VALID" ? 0 : pads[i];
    if (derived) {
      const int64_t total = full + out_pad[i] - y[2 + i];
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
    const int64_t pr = full - y[2 + i] - pl;  // output_padding shows up as a negative end pad
    if (pl < 0 || pr < 0) not_fast("output_padding beyond the pads");
    w.pad_l.push_back(pl);
    w.pad_r.push_back(pr);
  }
  // ONNX weights [C, M/g, k...] are oneDNN's [g, M/g, C/g, k...] at these strides.
  const int64_t kvol = [&] {
    int64_t v = 1;
    for (int64_t k : kernel) v *= k;
    return v;
  }();
  const int64_t cg = cin / group;
  memory::dims wdims{group, mg, cg}, wstrides{cg * mg * kvol, kvol, mg * kvol};
  int64_t s = kvol;
  for (int64_t k : kernel) {
    wdims.push_back(k);
    s /= k;
    wstrides.push_back(s);
  }
  if (group == 1) {
    wdims.erase(wdims.begin());
    wstrides.erase(wstrides.begin());
  }
  const memory src = node.input(0, plain_desc(x, dt::f32));
  const memory weights = node.input(1, strided_desc(wdims, wstrides));
  const memory dst = node.output(0, plain_desc(y, dt::f32));
  memory bias;
  memory::desc bias_any;
  if (has_in(n, 2)) {
    if (all_f32_dims(in_value(g, n, 2)) != memory::dims{maps}) not_fast("bias size");
    bias = node.input(2, plain_desc({maps}, dt::f32));
    bias_any = bias.get_desc();
  }
  auto any = [](const memory::dims& d) { return memory::desc(d, dt::f32, memory::format_tag::any); };
  const dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm::deconvolution_direct,
                                               any(x), any(wdims), bias_any, any(y), w.strides,
                                               dnnl_dilations(w.dilations), w.pad_l, w.pad_r);
  const auto pd = usable(dnnl::deconvolution_forward::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()),
                         /*allow_ref=*/false);
  run_through_workspace(node, dnnl::deconvolution_forward(pd), pd, src, weights, wv, bias, dst, "deconv", options);
}

}  // namespace memledger::exec::fast
