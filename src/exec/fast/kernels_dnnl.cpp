// The fast kernels: Conv (grouped and depthwise), ConvTranspose, MatMul, Gemm, pooling,
// BatchNormalization, Softmax, Concat, Transpose, ReduceMean, binary arithmetic and the
// common activations on oneDNN, plus reshape-like copies. Which operator runs with which of
// these families is its op table record's fact (OpRecord::fast); this file keeps only what
// each family needs per operator (the oneDNN algorithm). Activations are row-major NCHW
// (the host profile's layout) or, between fast nodes, channels-last NHWC (fast/layout.h:
// the same bytes in another order); where a primitive prefers another format, the input,
// weights and output are reordered through workspace regions the contract declares. A
// Relu, Clip, Sigmoid or SiLU after a Conv is its post-op (PrepareOptions::fuse; a SiLU
// runs as the fast set's own loop after the Conv's primitive, fast/silu.h).
// Implementations that allocate on their own (oneDNN's gemm-based ones pack through
// malloc) are refused, as are the slow reference ones: then the reference kernel runs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "exec/fast/dnnl_node.h"
#include "exec/fast/silu.h"
#include "memledger/ir/op_table.h"
#include "memledger/ir/self_gated.h"

namespace memledger::exec::fast {
namespace {

using dnnl::algorithm;
using dnnl::memory;
using dt = dnnl::memory::data_type;
using Args = std::vector<std::pair<int, memory>>;

// The family the op table names for `n`'s operator (at the graph's opset) that the fast set runs it with.
FastKernel fast_kernel(const Graph& g, const Node& n) {
  const OpRecord* record = find_op(n, g.opset);
  return record ? record->fast : FastKernel::kNone;
}

// Thrown inside preparation when the fast set does not take this node.
struct NotFast {
  std::string why;
};

[[noreturn]] void not_fast(std::string why) { throw NotFast{std::move(why)}; }

const Value& in_value(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || !n.inputs[i].valid()) not_fast(fmt::format("input {} missing", i));
  return g.value(n.inputs[i]);
}
const Value& out_value(const Graph& g, const Node& n) { return g.value(n.outputs.at(0)); }
bool has_in(const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i].valid(); }

void require_f32(const Value& v) {
  if (v.dtype != DType::kFloat32) not_fast(fmt::format("'{}' is {}", v.name, dtype_name(v.dtype)));
}

memory::dims all_f32_dims(const Value& v) {
  require_f32(v);
  return to_dims(v.shape);
}

// A primitive descriptor whose implementation is neither gemm-based (it allocates packing
// buffers itself) nor a reference loop (slower than exec's own kernels).
template <typename PD>
PD usable(PD pd, bool allow_ref) {
  for (;;) {
    const std::string impl = pd.impl_info_str();
    const bool gemm = impl.rfind("gemm", 0) == 0;
    const bool ref = impl.rfind("ref", 0) == 0;
    if (!gemm && (allow_ref || !ref)) return pd;
    if (!pd.next_impl()) not_fast(fmt::format("oneDNN has only '{}' for it", impl));
  }
}

// The spatial window of a Conv, ConvTranspose or pool node: strides, dilations (ONNX
// convention, 1 = dense), pads at each end as oneDNN needs them for the node's shapes.
struct Window {
  memory::dims kernel, strides, dilations, pad_l, pad_r;
};

std::vector<int64_t> sized_attr(const Node& n, const char* key, int64_t fallback, size_t count) {
  std::vector<int64_t> v = n.ints_attr(key, std::vector<int64_t>(count, fallback));
  if (v.size() != count) not_fast(fmt::format("attribute '{}' has {} values", key, v.size()));
  return v;
}

// Forward windows (Conv, pools): pad_r is what makes oneDNN's output extent the node's
// (ceil_mode and pads beyond the last window included).
Window forward_window(const Node& n, const Shape& x, const Shape& y, const std::vector<int64_t>& kernel) {
  const size_t spatial = x.size() - 2;
  if (kernel.size() != spatial) not_fast("kernel rank");
  Window w;
  w.kernel = kernel;
  w.strides = sized_attr(n, "strides", 1, spatial);
  w.dilations = sized_attr(n, "dilations", 1, spatial);
  const auto pads = sized_attr(n, "pads", 0, 2 * spatial);
  const std::string auto_pad = n.string_attr("auto_pad", "NOTSET");
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t ext = (kernel[i] - 1) * w.dilations[i] + 1;
    int64_t pl = 0;
    if (auto_pad == "NOTSET") {
      pl = pads[i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, (y[2 + i] - 1) * w.strides[i] + ext - x[2 + i]);
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad != "VALID") {
      not_fast("auto_pad " + auto_pad);
    }
    w.pad_l.push_back(pl);
    w.pad_r.push_back((y[2 + i] - 1) * w.strides[i] + ext - x[2 + i] - pl);
  }
  return w;
}

memory::dims dnnl_dilations(const memory::dims& onnx) {
  memory::dims d;
  for (int64_t v : onnx) d.push_back(v - 1);
  return d;
}

// Weights of dims `dims` stored at `strides` (elements), as a descriptor.
memory::desc strided_desc(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, dt::f32, strides);
}

// Whether value `v` is held channels-last (fast/layout.h).
bool channels_last(const PrepareOptions& options, ValueId v) {
  return options.channels_last && v.valid() && (*options.channels_last)[static_cast<size_t>(v.index)] != 0;
}

// An activation's descriptor: NHWC where `cl` (a 4-d tensor), else row-major.
memory::desc act_desc(const memory::dims& dims, bool cl) {
  if (cl && dims.size() == 4) return memory::desc(dims, dt::f32, memory::format_tag::nhwc);
  return plain_desc(dims, dt::f32);
}

// Unary activations: oneDNN eltwise over the flat buffer (same shape in and out), then
// clipped to [0, 1] where `clip_to_unit` (HardSigmoid: alpha·x + beta, then the clip; oneDNN
// 2.6 has no hard sigmoid of its own).
struct Activation {
  algorithm alg;
  float alpha = 0, beta = 0;
  bool clip_to_unit = false;
};

// The activation's oneDNN post-ops (appended to `ops`).
void append_activation(dnnl::post_ops& ops, const Activation& a) {
  ops.append_eltwise(1.0f, a.alg, a.alpha, a.beta);
  if (a.clip_to_unit) ops.append_eltwise(1.0f, algorithm::eltwise_clip_v2, 0.0f, 1.0f);
}

float constant_scalar(const Graph& g, const Node& n, size_t i, float fallback) {
  if (!has_in(n, i)) return fallback;
  const Value& v = g.value(n.inputs[i]);
  if (!v.is_constant() || v.dtype != DType::kFloat32 || v.constant->elements() != 1)
    not_fast(fmt::format("input {} is not a constant float scalar", i));
  return static_cast<float>(v.constant->element_as_double(0));
}

Activation activation_of(const Graph& g, const Node& n) {
  const std::string& op = n.op;
  if (op == "Relu") return {algorithm::eltwise_relu};
  if (op == "LeakyRelu") return {algorithm::eltwise_relu, n.float_attr("alpha", 0.01f)};
  if (op == "Elu") return {algorithm::eltwise_elu, n.float_attr("alpha", 1.0f)};
  if (op == "Sigmoid") return {algorithm::eltwise_logistic};
  if (op == "Tanh") return {algorithm::eltwise_tanh};
  if (op == "Exp") return {algorithm::eltwise_exp};
  if (op == "Abs") return {algorithm::eltwise_abs};
  if (op == "Sqrt") return {algorithm::eltwise_sqrt};
  if (op == "Neg") return {algorithm::eltwise_linear, -1.0f, 0.0f};
  if (op == "HardSwish") return {algorithm::eltwise_hardswish};
  if (op == "HardSigmoid")
    return {algorithm::eltwise_linear, n.float_attr("alpha", 0.2f), n.float_attr("beta", 0.5f), true};
  if (op == "Clip") {
    const float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
    if (g.opset < 11) return {algorithm::eltwise_clip_v2, n.float_attr("min", lo), n.float_attr("max", hi)};
    return {algorithm::eltwise_clip_v2, constant_scalar(g, n, 1, lo), constant_scalar(g, n, 2, hi)};
  }
  not_fast("no activation " + op);
}

// The product x·gate(x) of a self-gated activation (ir/self_gated.h) as one oneDNN
// algorithm: SiLU for a Sigmoid, hard-swish for a HardSigmoid with PyTorch's alpha 1/6 and
// beta 1/2 (x·relu6(x + 3)/6, as torch.onnx writes nn.Hardswish below opset 14). Another
// HardSigmoid has none: its Mul stays a Mul.
std::optional<Activation> gated_product(const Node& gate) {
  if (!is_self_gate(gate)) return std::nullopt;
  if (gate.op == "Sigmoid") return Activation{algorithm::eltwise_swish, 1.0f, 0.0f};
  if (gate.float_attr("alpha", 0.2f) == 1.0f / 6 && gate.float_attr("beta", 0.5f) == 0.5f)
    return Activation{algorithm::eltwise_hardswish};
  return std::nullopt;
}

int gated_input(const Graph& g, const Node& mul);

// The activation a Conv's output goes through, that can be its post-op: one the op table
// marks conv_post_op (Relu, Clip, Sigmoid, HardSigmoid) that alone reads the output (same shape, float, not a graph
// output), or a self-gated activation's Mul (SiLU, hard-swish) whose gate and itself are the output's only readers.
// Null when there is none. (A squeeze-and-excitation block's gate is a Conv on a 1×1 activation and its Sigmoid.)
struct PostOp {
  const Node* node = nullptr;  // the Relu, Clip or Mul whose output the post-op computes
  Activation activation;
};

PostOp fusable_activation(const Graph& g, const Node& conv) {
  if (fast_kernel(g, conv) != FastKernel::kConv || conv.outputs.size() != 1 || !conv.outputs[0].valid()) return {};
  const ValueId c = conv.outputs[0];
  if (g.is_graph_output(c) || g.value(c).dtype != DType::kFloat32) return {};
  const std::vector<NodeId> readers = g.consumers(c);
  if (readers.size() == 2) {  // gate(c) and Mul(c, gate), in either order
    for (int k = 0; k < 2; ++k) {
      const Node& mul = g.node(readers[static_cast<size_t>(k)]);
      const Node& gate = g.node(readers[static_cast<size_t>(1 - k)]);
      const int x = gated_input(g, mul);
      if (x >= 0 && mul.inputs[static_cast<size_t>(x)] == c &&
          mul.inputs[static_cast<size_t>(1 - x)] == gate.outputs.at(0))
        return {&mul, *gated_product(gate)};
    }
    return {};
  }
  if (readers.size() != 1) return {};
  const Node& act = g.node(readers[0]);
  const OpRecord* record = find_op(act, g.opset);
  if (!record || !record->conv_post_op || act.inputs.empty() || act.inputs[0] != c || act.outputs.size() != 1 ||
      !act.outputs[0].valid())
    return {};
  const Value& yv = g.value(act.outputs[0]);
  if (yv.dtype != DType::kFloat32 || yv.shape != g.value(c).shape) return {};
  try {
    return {&act, activation_of(g, act)};
  } catch (const NotFast&) {
    return {};
  }
}

// The input of `node` (an activation or a self-gated activation's Mul) that a Conv's output with `node` as its
// post-op is, or -1.
int forwarded_input(const Graph& g, const Node& node) {
  const int x = node.op == "Mul" ? gated_input(g, node) : 0;
  if (x < 0 || node.inputs.size() <= static_cast<size_t>(x) || !node.inputs[static_cast<size_t>(x)].valid()) return -1;
  const NodeId producer = g.value(node.inputs[static_cast<size_t>(x)]).producer;
  if (!producer.valid()) return -1;
  return fusable_activation(g, g.node(producer)).node == &node ? x : -1;
}

// The Conv whose post-op `node` is, or null.
const Node* fused_conv_of(const Graph& g, const Node& node) {
  const int x = forwarded_input(g, node);
  return x < 0 ? nullptr : &g.node(g.value(node.inputs[static_cast<size_t>(x)]).producer);
}

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

// An activation or a self-gated activation's Mul fused into the Conv before it: input `input` (the Conv's
// output) is already activated.
class ForwardNode : public PreparedNode {
 public:
  ForwardNode(std::string op, int64_t bytes, int input) : op_(std::move(op)), bytes_(bytes), input_(input) {}
  int64_t workspace_bytes() const override { return 0; }
  void run(KernelContext& ctx) override {
    const std::byte* from = ctx.in(static_cast<size_t>(input_)).data;
    std::byte* to = ctx.out(0).data;
    if (from != to && bytes_ > 0) std::memmove(to, from, static_cast<size_t>(bytes_));
  }
  std::string describe() const override { return op_ + " fused into the Conv before it"; }
  bool keeps_in_place_promise() const override { return true; }
  bool relies_on_fusion() const override { return true; }
  // The gate (a SiLU's Sigmoid) relies on its Mul: computed here, by the Conv.
  bool fused() const override { return op_ == "Mul"; }
  int forwarded_input() const override { return input_; }

 private:
  std::string op_;
  int64_t bytes_;
  int input_;
};

bool prepare_pointwise_as_matmul(DnnlNode& node, const Graph& g, const Node& n);
void prepare_pointwise_channels_last(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options,
                                     const dnnl::primitive_attr& attr);
void add_matmul(DnnlNode& node, const memory& a, const memory& b, const memory& bias, const memory& y,
                const dnnl::primitive_attr& attr, const Value* b_constant, const PrepareOptions& options);

// Conv and ConvTranspose share the layout work: the primitive descriptor with every
// format left to oneDNN, then reorders where its choice differs from the plain buffers.
template <typename Primitive, typename PD>
void run_through_workspace(DnnlNode& node, const PD& pd, const memory& src, const memory& weights,
                           const Value& weights_value, const memory& bias, const memory& dst, const std::string& what,
                           const PrepareOptions& options) {
  const memory src_in = node.reordered(src, pd.src_desc());
  const memory weights_in = weights_value.is_constant()
                                ? node.constant_reordered(weights, *weights_value.constant, pd.weights_desc(), options)
                                : node.reordered(weights, pd.weights_desc());
  const bool dst_direct = pd.dst_desc() == dst.get_desc();
  const memory dst_out = dst_direct ? dst : node.workspace(pd.dst_desc());
  Args args{{DNNL_ARG_SRC, src_in}, {DNNL_ARG_WEIGHTS, weights_in}, {DNNL_ARG_DST, dst_out}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, bias);
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(Primitive(pd), std::move(args), what + " " + pd.impl_info_str());
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
      run_through_workspace<dnnl::convolution_forward>(trial, pd, src, weights, wv, bias, dst, "conv", options);
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
  run_through_workspace<dnnl::deconvolution_forward>(node, pd, src, weights, wv, bias, dst, "deconv", options);
}

void prepare_pool(DnnlNode& node, const Graph& g, const Node& n, bool max, bool global, const PrepareOptions& options) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  if (n.outputs.size() > 1 && n.outputs[1].valid()) not_fast("Indices output");
  const memory::dims x = all_f32_dims(xv), y = all_f32_dims(yv);
  if (x.size() < 3 || x.size() > 5) not_fast("rank");
  Window w;
  if (global) {
    for (size_t i = 2; i < x.size(); ++i) {
      w.kernel.push_back(x[i]);
      w.strides.push_back(1);
      w.dilations.push_back(1);
      w.pad_l.push_back(0);
      w.pad_r.push_back(0);
    }
  } else {
    if (!n.has_attr("kernel_shape")) not_fast("no kernel_shape");
    w = forward_window(n, xv.shape, yv.shape, n.ints_attr("kernel_shape"));
  }
  algorithm alg = algorithm::pooling_max;
  if (!max) {
    const bool include = n.int_attr("count_include_pad", 0) != 0;
    alg = include ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding;
    // ONNX counts padded positions only up to the stated end pads; oneDNN counts the whole
    // window: they agree when no window reaches past the stated pads.
    if (include && !global) {
      const auto pads = sized_attr(n, "pads", 0, 2 * w.kernel.size());
      for (size_t i = 0; i < w.kernel.size(); ++i)
        if (w.pad_r[i] > pads[w.kernel.size() + i]) not_fast("count_include_pad with ceil_mode");
    }
  }
  const bool cl = channels_last(options, n.inputs[0]);  // the output then too, or neutral
  const memory src = node.input(0, act_desc(x, cl));
  const memory dst = node.output(0, act_desc(y, cl));
  const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src.get_desc(), dst.get_desc(),
                                            w.strides, w.kernel, dnnl_dilations(w.dilations), w.pad_l, w.pad_r);
  const auto pd = usable(dnnl::pooling_v2_forward::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()),
                         /*allow_ref=*/true);
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::pooling_v2_forward(pd), std::move(args), std::string("pool ") + pd.impl_info_str());
}

// Whether `d` is a plain strided descriptor (no blocks) starting at its buffer's first byte.
bool plain_strided(const memory::desc& d) {
  return d.data.format_kind == dnnl_blocked && d.data.format_desc.blocking.inner_nblks == 0 && d.data.offset0 == 0;
}

// Constant weights up to this size run as a 1-D convolution below AVX-512 (add_matmul_as_conv):
// without prepacking they are reordered into the workspace on every run, which must not grow
// without bound (vgg16's first fc: 411 MB). The choice does not depend on prepacking (`run
// --arena` compares a run without it against one with it, bit for bit).
constexpr int64_t kConvProductWeightBytes = int64_t{16} << 20;

// y = a·b (+ bias) as a 1-D convolution with a one-wide window over the rows of a: a [rows, K]
// row-major is the convolution's source in nwc (a row is a position's K channels), y its
// destination, bᵀ [N, K] its weights. oneDNN 2.6 has only gemm-based matmuls below AVX-512,
// which pack through malloc (refused: the run must touch only its declared buffers); its AVX2
// 1×1 convolution is a JIT kernel with no allocation of its own (jit_1x1:avx2, weights in its
// blocked format: prepacked, or reordered into the workspace on every run).
void add_matmul_as_conv(DnnlNode& node, const memory& a, const memory& b, const memory& bias, const memory& y,
                        const dnnl::primitive_attr& attr, const Value* b_constant, const PrepareOptions& options) {
  const memory::desc ad = a.get_desc(), bd = b.get_desc(), yd = y.get_desc();
  const memory::dims adims = ad.dims(), bdims = bd.dims(), ydims = yd.dims();
  const size_t rank = bdims.size();
  if (rank < 2 || adims.size() != rank || ydims.size() != rank) not_fast("operand ranks differ");
  for (size_t i = 0; i + 2 < rank; ++i)
    if (bdims[i] != 1) not_fast("batched weights");
  if (!plain_strided(bd) || ad != plain_desc(adims, dt::f32) || yd != plain_desc(ydims, dt::f32))
    not_fast("operands not row-major");
  const int64_t K = bdims[rank - 2], N = bdims[rank - 1];
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= adims[i];
  if (adims[rank - 1] != K || ydims[rank - 1] != N || rows * N != static_cast<int64_t>(yd.get_size() / sizeof(float)))
    not_fast("operand extents");
  if (K * N * static_cast<int64_t>(sizeof(float)) > kConvProductWeightBytes)
    not_fast(fmt::format("weights of {} B, over the {} B a product as a convolution takes", K * N * sizeof(float),
                         kConvProductWeightBytes));
  // Gemm's alpha (matmul's output scale) as a linear post-op: the AVX2 1×1 convolution takes
  // no output scale. Where there is a bias, the scale would apply to it too: not that.
  dnnl::primitive_attr conv_attr = attr;
  int mask = 0;
  std::vector<float> scales;
  attr.get_output_scales(mask, scales);
  if (!scales.empty() && !(scales.size() == 1 && scales[0] == 1.0f)) {
    if (mask != 0 || scales.size() != 1 || bias || attr.get_post_ops().len() > 0)
      not_fast("a scaled product with a bias or post-ops");
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, algorithm::eltwise_linear, scales[0], 0.0f);
    conv_attr = user_scratchpad_attr();
    conv_attr.set_post_ops(ops);
  }
  const dnnl_dim_t* bs = bd.data.format_desc.blocking.strides;
  const memory src = node.alias(a, memory::desc({1, K, rows}, dt::f32, memory::dims{rows * K, 1, K}));
  const memory dst = node.alias(y, memory::desc({1, N, rows}, dt::f32, memory::dims{rows * N, 1, N}));
  const memory weights = node.alias(b, memory::desc({N, K, 1}, dt::f32, memory::dims{bs[rank - 1], bs[rank - 2], 1}));
  const memory conv_bias = bias ? node.alias(bias, plain_desc({N}, dt::f32)) : memory();
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm::convolution_direct,
                                             src.get_desc(), memory::desc({N, K, 1}, dt::f32, memory::format_tag::any),
                                             bias ? conv_bias.get_desc() : memory::desc(), dst.get_desc(), {1}, {0},
                                             {0}, {0});
  const auto pd = usable(dnnl::convolution_forward::primitive_desc(desc, conv_attr, cpu_engine()), /*allow_ref=*/false);
  const memory w = b_constant ? node.constant_reordered(weights, *b_constant->constant, pd.weights_desc(), options)
                              : node.reordered(weights, pd.weights_desc());
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, conv_bias);
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::convolution_forward(pd), std::move(args), std::string("matmul as conv ") + pd.impl_info_str());
}

// y = x·W (+ bias) through oneDNN's matmul; operands given by their (possibly strided)
// descriptors over inputs 0 and 1. Where oneDNN has only a gemm-based matmul (below
// AVX-512), a 1-D convolution computes it (add_matmul_as_conv).
void add_matmul(DnnlNode& node, const memory& a, const memory& b, const memory& bias, const memory& y,
                const dnnl::primitive_attr& attr, const Value* b_constant, const PrepareOptions& options) {
  // Constant weights: oneDNN picks their format, and they are reordered into it once. Not
  // prepacking, they are used as they lie: a reorder on every run would need a workspace
  // as big as the weight (vgg's first fc: 411 MB) for a product that reads it once.
  const bool reorder_b = b_constant && options.prepack_weights;
  const memory::desc b_desc =
      reorder_b ? memory::desc(b.get_desc().dims(), dt::f32, memory::format_tag::any) : b.get_desc();
  const dnnl::matmul::desc desc = bias ? dnnl::matmul::desc(a.get_desc(), b_desc, bias.get_desc(), y.get_desc())
                                       : dnnl::matmul::desc(a.get_desc(), b_desc, y.get_desc());
  std::optional<dnnl::matmul::primitive_desc> pd;
  try {
    pd = usable(dnnl::matmul::primitive_desc(desc, attr, cpu_engine()), /*allow_ref=*/false);
  } catch (const NotFast& e) {
    try {
      add_matmul_as_conv(node, a, b, bias, y, attr, b_constant, options);
      return;
    } catch (const NotFast& conv) {
      not_fast(e.why + "; as a convolution: " + conv.why);
    }
  }
  const memory weights = reorder_b ? node.constant_reordered(b, *b_constant->constant, pd->weights_desc(), options) : b;
  Args args{{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, y}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, bias);
  if (memory pad = node.scratchpad(*pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::matmul(*pd), std::move(args), std::string("matmul ") + pd->impl_info_str());
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

void prepare_gemm(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  const memory::dims a = all_f32_dims(in_value(g, n, 0)), b = all_f32_dims(in_value(g, n, 1));
  const memory::dims y = all_f32_dims(out_value(g, n));
  if (a.size() != 2 || b.size() != 2 || y.size() != 2) not_fast("rank");
  const bool ta = n.int_attr("transA", 0) != 0, tb = n.int_attr("transB", 0) != 0;
  const float alpha = n.float_attr("alpha", 1.0f), beta = n.float_attr("beta", 1.0f);
  const int64_t M = y[0], N = y[1], K = ta ? a[0] : a[1];
  const memory A = node.input(0, strided_desc({M, K}, ta ? memory::dims{1, M} : memory::dims{K, 1}));
  const memory B = node.input(1, strided_desc({K, N}, tb ? memory::dims{1, K} : memory::dims{N, 1}));
  memory bias;
  if (has_in(n, 2) && beta != 0.0f) {
    const Shape& c = in_value(g, n, 2).shape;
    require_f32(in_value(g, n, 2));
    if (beta != 1.0f || !(c == Shape{N} || c == Shape{1, N})) not_fast("C other than a row of biases");
    bias = node.input(2, plain_desc({1, N}, dt::f32));
  }
  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  const Value& bv = in_value(g, n, 1);
  add_matmul(node, A, B, bias, node.output(0, plain_desc(y, dt::f32)), attr, bv.is_constant() ? &bv : nullptr, options);
}

void prepare_matmul(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  memory::dims a = all_f32_dims(in_value(g, n, 0)), b = all_f32_dims(in_value(g, n, 1));
  if (in_value(g, n, 0).shape.empty() || in_value(g, n, 1).shape.empty()) not_fast("scalar operand");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  memory::dims y(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) not_fast("batch axes");
    y[i] = std::max(a[i], b[i]);
  }
  y[rank - 2] = a[rank - 2];
  y[rank - 1] = b[rank - 1];
  if (rank > 12) not_fast("rank over 12");
  const memory A = node.input(0, plain_desc(a, dt::f32));
  const memory B = node.input(1, plain_desc(b, dt::f32));
  const Value& bv = in_value(g, n, 1);
  add_matmul(node, A, B, {}, node.output(0, plain_desc(y, dt::f32)), user_scratchpad_attr(),
             bv.is_constant() ? &bv : nullptr, options);
}

// The input x of `mul` (0 or 1) when `mul` is a self-gated activation's Mul, x·gate(x), whose gate
// (gated_product) only that Mul reads; else -1.
int gated_input(const Graph& g, const Node& mul) {
  if (mul.op != "Mul" || mul.inputs.size() != 2 || !mul.domain.empty() || mul.outputs.size() != 1) return -1;
  for (int x = 0; x < 2; ++x) {
    const ValueId xv = mul.inputs[static_cast<size_t>(x)], sv = mul.inputs[static_cast<size_t>(1 - x)];
    if (!xv.valid() || !sv.valid() || xv == sv) continue;
    const Value& s = g.value(sv);
    if (!s.producer.valid() || g.is_graph_output(sv) || g.consumers(sv).size() != 1) continue;
    const Node& gate = g.node(s.producer);
    if (!gated_product(gate) || gate.inputs.size() != 1 || gate.inputs[0] != xv) continue;
    const Value& xval = g.value(xv);
    if (xval.dtype != DType::kFloat32 || s.shape != xval.shape || g.value(mul.outputs[0]).shape != xval.shape) continue;
    return x;
  }
  return -1;
}

// A gate whose work its self-gated activation's Mul does.
class SkippedNode : public PreparedNode {
 public:
  int64_t workspace_bytes() const override { return 0; }
  void run(KernelContext&) override {}
  std::string describe() const override { return "nothing (the Mul it gates computes it)"; }
  bool keeps_in_place_promise() const override { return true; }
  bool relies_on_fusion() const override { return true; }
};

// One eltwise step of `a` from `src` to `dst` (then its clip in place over dst).
void add_eltwise(DnnlNode& node, const memory& src, const memory& dst, const Activation& a, const char* what) {
  auto step = [&](const memory& from, algorithm alg, float alpha, float beta) {
    const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, alg, from.get_desc(), alpha, beta);
    const auto pd = usable(dnnl::eltwise_forward::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()),
                           /*allow_ref=*/false);
    Args args{{DNNL_ARG_SRC, from}, {DNNL_ARG_DST, dst}};
    if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
    node.add_step(dnnl::eltwise_forward(pd), std::move(args), std::string(what) + " " + pd.impl_info_str());
  };
  step(src, a.alg, a.alpha, a.beta);
  if (a.clip_to_unit) step(dst, algorithm::eltwise_clip_v2, 0.0f, 1.0f);
}

// y = x·gate(x) (a self-gated activation's Mul, input x = `x`) over the flat buffer of x: the
// fast set's own loop for SiLU (fast/silu.h), else oneDNN's swish or hard-swish.
void prepare_gated(DnnlNode& node, const Graph& g, const Node& mul, int x) {
  const Value& xv = in_value(g, mul, static_cast<size_t>(x));
  require_f32(xv);
  const Node& gate = g.node(g.value(mul.inputs[static_cast<size_t>(1 - x)]).producer);
  const Activation a = *gated_product(gate);
  node.set_keeps_in_place_promise();
  node.set_fused();
  if (a.alg == algorithm::eltwise_swish && silu_available()) {
    node.set_silu(x, element_count(xv.shape, xv.name));
    return;
  }
  const memory::dims flat{std::max<int64_t>(element_count(xv.shape, xv.name), 1)};
  add_eltwise(node, node.input(x, plain_desc(flat, dt::f32)), node.output(0, plain_desc(flat, dt::f32)), a,
              a.alg == algorithm::eltwise_swish ? "silu" : "hardswish");
}

void prepare_activation(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  require_f32(xv);
  if (xv.shape != yv.shape) not_fast("shape");
  const memory::dims flat{std::max<int64_t>(element_count(xv.shape, xv.name), 1)};
  add_eltwise(node, node.input(0, plain_desc(flat, dt::f32)), node.output(0, plain_desc(flat, dt::f32)),
              activation_of(g, n), "eltwise");
  node.set_keeps_in_place_promise();
  node.set_in_place_input(0);
}

void prepare_binary(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  static const std::map<std::string, std::pair<algorithm, bool>> ops{
      {"Add", {algorithm::binary_add, true}}, {"Sub", {algorithm::binary_sub, false}},
      {"Mul", {algorithm::binary_mul, true}}, {"Div", {algorithm::binary_div, false}},
      {"Max", {algorithm::binary_max, true}}, {"Min", {algorithm::binary_min, true}}};
  const auto op = ops.find(n.op);
  if (op == ops.end() || n.inputs.size() != 2) not_fast("not a two-input arithmetic node");
  const Value& yv = out_value(g, n);
  memory::dims y = all_f32_dims(yv);
  int first = 0, second = 1;
  if (in_value(g, n, 0).shape != yv.shape) {
    if (!op->second.second || in_value(g, n, 1).shape != yv.shape) not_fast("input 0 is broadcast");
    std::swap(first, second);
  }
  require_f32(in_value(g, n, static_cast<size_t>(first)));
  memory::dims b = all_f32_dims(in_value(g, n, static_cast<size_t>(second)));
  if (in_value(g, n, static_cast<size_t>(second)).shape.empty()) b = {};
  b.insert(b.begin(), y.size() - b.size(), 1);
  // Channels-last: the full-shape operands are, and a broadcast one has one byte order.
  const bool cl = channels_last(options, n.outputs[0]);
  const memory src0 = node.input(first, act_desc(y, cl));
  const memory src1 = node.input(second, act_desc(b, cl));
  const memory dst = node.output(0, act_desc(y, cl));
  const dnnl::binary::desc desc(op->second.first, src0.get_desc(), src1.get_desc(), dst.get_desc());
  const auto pd = usable(dnnl::binary::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()), false);
  Args args{{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::binary(pd), std::move(args), std::string("binary ") + pd.impl_info_str());
  node.set_keeps_in_place_promise();
  node.set_in_place_input(first);  // src0 has the output's shape and order
}

void prepare_batch_norm(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  if (n.int_attr("training_mode", 0) != 0) not_fast("training mode");
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i].valid()) not_fast("running statistics outputs");
  const memory::dims x = all_f32_dims(in_value(g, n, 0));
  if (x.size() < 2) not_fast("rank");
  for (size_t i = 1; i <= 4; ++i)
    if (all_f32_dims(in_value(g, n, i)) != memory::dims{x[1]}) not_fast("statistics size");
  const bool cl = channels_last(options, n.inputs[0]);
  const memory src = node.input(0, act_desc(x, cl));
  const memory dst = node.output(0, act_desc(x, cl));
  const memory::desc channel = plain_desc({x[1]}, dt::f32);
  const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  const dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, src.get_desc(),
                                                     n.float_attr("epsilon", 1e-5f), flags);
  const auto pd =
      usable(dnnl::batch_normalization_forward::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()), true);
  // oneDNN's NHWC batch norm asks for a scratchpad that some shapes leave untouched (13 of
  // mnasnet0_5.bn's): a workspace the contract would declare but the run not use. Such a
  // node makes its class row-major instead (fast/layout.h).
  if (cl && pd.scratchpad_desc().get_size() > 0) not_fast("channels-last batch norm with a scratchpad");
  Args args{{DNNL_ARG_SRC, src},
            {DNNL_ARG_DST, dst},
            {DNNL_ARG_SCALE, node.input(1, channel)},
            {DNNL_ARG_SHIFT, node.input(2, channel)},
            {DNNL_ARG_MEAN, node.input(3, channel)},
            {DNNL_ARG_VARIANCE, node.input(4, channel)}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::batch_normalization_forward(pd), std::move(args), std::string("bnorm ") + pd.impl_info_str());
  node.set_keeps_in_place_promise();
}

int64_t node_axis(const Node& n, int64_t fallback, int64_t rank) {
  const int64_t axis = n.int_attr("axis", fallback);
  if (axis < -rank || axis >= rank) not_fast("axis");
  return axis < 0 ? axis + rank : axis;
}

void prepare_softmax(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  memory::dims x = all_f32_dims(xv);
  const int64_t rank = static_cast<int64_t>(xv.shape.size());
  if (rank == 0) not_fast("scalar");
  int64_t axis = node_axis(n, g.opset < 13 ? 1 : -1, rank);
  if (g.opset < 13) {  // the axes from `axis` on are one row
    int64_t rows = 1, cols = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : cols) *= x[static_cast<size_t>(i)];
    x = {rows, cols};
    axis = 1;
  }
  const memory src = node.input(0, plain_desc(x, dt::f32));
  const memory dst = node.output(0, plain_desc(x, dt::f32));
  const dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference,
                                            n.op == "Softmax" ? algorithm::softmax_accurate : algorithm::softmax_log,
                                            src.get_desc(), dst.get_desc(), static_cast<int>(axis));
  const auto pd = usable(dnnl::softmax_v2_forward::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()), true);
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::softmax_v2_forward(pd), std::move(args), std::string("softmax ") + pd.impl_info_str());
}

// Concat of row-major buffers: for every index of the axes before `axis`, each input's
// block (its extent on `axis` × the inner extent) in turn, by memcpy. (oneDNN's concat on
// plain formats copied element by element: 3.9 ms of squeezenet's 12.)
class ConcatNode : public PreparedNode {
 public:
  ConcatNode(int64_t outer, std::vector<int64_t> block_bytes) : outer_(outer), block_bytes_(std::move(block_bytes)) {}
  int64_t workspace_bytes() const override { return 0; }
  void run(KernelContext& ctx) override {
    std::byte* out = ctx.out(0).data;
    for (int64_t o = 0; o < outer_; ++o)
      for (size_t i = 0; i < block_bytes_.size(); ++i) {
        const auto n = static_cast<size_t>(block_bytes_[i]);
        std::memcpy(out, ctx.in(i).data + static_cast<size_t>(o) * n, n);
        out += n;
      }
  }
  std::string describe() const override { return "concat (memcpy)"; }

 private:
  int64_t outer_;
  std::vector<int64_t> block_bytes_;
};

std::unique_ptr<PreparedNode> prepare_concat(const Graph& g, const Node& n, const PrepareOptions& options) {
  const Value& yv = out_value(g, n);
  const int64_t rank = static_cast<int64_t>(yv.shape.size());
  if (rank == 0) not_fast("scalar");
  const size_t axis = static_cast<size_t>(node_axis(n, 0, rank));
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < yv.shape.size(); ++a) {
    if (a < axis) outer *= yv.shape[a];
    if (a > axis) inner *= yv.shape[a];
  }
  std::vector<int64_t> blocks;
  int64_t total = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value& v = in_value(g, n, i);
    if (v.dtype != yv.dtype || v.shape.size() != yv.shape.size()) not_fast("inputs differ from the output");
    blocks.push_back(v.shape[axis] * inner * host_element_bytes(v.dtype));
    total += v.shape[axis];
  }
  if (total != yv.shape[axis]) not_fast("extents do not add up");
  if (channels_last(options, n.outputs[0])) {  // on channels: each pixel's channels in turn
    if (axis != 1 || rank != 4) not_fast("channels-last concat off the channel axis");
    outer = yv.shape[0] * yv.shape[2] * yv.shape[3];
    for (size_t i = 0; i < n.inputs.size(); ++i) blocks[i] = in_value(g, n, i).shape[1] * host_element_bytes(yv.dtype);
  }
  return std::make_unique<ConcatNode>(outer, std::move(blocks));
}

void prepare_transpose(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  const dt type = dnnl_type(xv.dtype);
  if (type == dt::undef) not_fast("dtype " + std::string(dtype_name(xv.dtype)));
  const size_t rank = xv.shape.size();
  if (rank == 0) not_fast("scalar");
  std::vector<int64_t> perm = n.ints_attr("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank) not_fast("perm");
  const std::vector<int64_t> in_strides = dense_strides(xv.shape);
  memory::dims view_strides;
  for (int64_t p : perm) view_strides.push_back(in_strides.at(static_cast<size_t>(p)));
  const memory src = node.input(0, memory::desc(to_dims(yv.shape), type, view_strides));
  node.reorder_step(src, node.output(0, plain_desc(to_dims(yv.shape), type)));
}

std::vector<int64_t> constant_ints(const Graph& g, const Node& n, size_t i) {
  if (!has_in(n, i)) return {};
  const Value& v = g.value(n.inputs[i]);
  if (!v.is_constant() || (v.dtype != DType::kInt64 && v.dtype != DType::kInt32)) not_fast("non-constant indices");
  std::vector<int64_t> values;
  for (int64_t k = 0; k < v.constant->elements(); ++k)
    values.push_back(static_cast<int64_t>(v.constant->element_as_double(k)));
  return values;
}

// Slice with constant bounds and positive steps: a reorder from a strided view of the
// input (offset and strides fixed at preparation) into the plain output.
void prepare_slice(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  const dt type = dnnl_type(xv.dtype);
  if (type == dt::undef) not_fast("dtype " + std::string(dtype_name(xv.dtype)));
  const int64_t rank = static_cast<int64_t>(xv.shape.size());
  if (rank == 0) not_fast("scalar");
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.inputs.size() > 1) {
    starts = constant_ints(g, n, 1);
    ends = constant_ints(g, n, 2);
    axes = constant_ints(g, n, 3);
    steps = constant_ints(g, n, 4);
  } else {
    starts = n.ints_attr("starts");
    ends = n.ints_attr("ends");
    axes = n.ints_attr("axes");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    not_fast("starts, ends, axes and steps differ in length");
  const std::vector<int64_t> in_strides = dense_strides(xv.shape);
  memory::dims strides(in_strides.begin(), in_strides.end());
  int64_t offset = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (axes[i] < -rank || axes[i] >= rank) not_fast("axis");
    const size_t a = static_cast<size_t>(axes[i] < 0 ? axes[i] + rank : axes[i]);
    if (steps[i] < 1) not_fast("a step below 1");
    const int64_t dim = xv.shape[a];
    const int64_t start = std::clamp<int64_t>(starts[i] < 0 ? starts[i] + dim : starts[i], 0, dim);
    offset += start * in_strides[a];
    strides[a] = in_strides[a] * steps[i];
  }
  memory::desc view(to_dims(yv.shape), type, strides);
  view.data.offset0 = offset;
  const memory src = node.input(0, view);
  node.reorder_step(src, node.output(0, plain_desc(to_dims(yv.shape), type)));
}

void prepare_reduce_mean(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const memory::dims x = all_f32_dims(xv);
  const int64_t rank = static_cast<int64_t>(xv.shape.size());
  std::vector<int64_t> axes = n.ints_attr("axes");
  if (has_in(n, 1)) {
    const Value& a = g.value(n.inputs[1]);
    if (!a.is_constant()) not_fast("axes not constant");
    axes.clear();
    for (int64_t i = 0; i < a.constant->elements(); ++i)
      axes.push_back(static_cast<int64_t>(a.constant->element_as_double(i)));
  }
  if (axes.empty()) {
    if (n.int_attr("noop_with_empty_axes", 0) != 0) not_fast("noop_with_empty_axes");
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  memory::dims y = x;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) not_fast("axis");
    y[static_cast<size_t>(a < 0 ? a + rank : a)] = 1;
  }
  const memory src = node.input(0, plain_desc(x, dt::f32));
  const memory dst = node.output(0, plain_desc(y, dt::f32));
  const dnnl::reduction::desc desc(algorithm::reduction_mean, src.get_desc(), dst.get_desc(), 0.0f, 0.0f);
  const auto pd = usable(dnnl::reduction::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()), true);
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::reduction(pd), std::move(args), std::string("reduction ") + pd.impl_info_str());
}

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference): the output's bytes
// are the input's; nothing to do when the planner gave the output the input's buffer.
class CopyNode : public PreparedNode {
 public:
  explicit CopyNode(int64_t bytes) : bytes_(bytes) {}
  int64_t workspace_bytes() const override { return 0; }
  void run(KernelContext& ctx) override {
    const std::byte* from = ctx.in(0).data;
    std::byte* to = ctx.out(0).data;
    if (from != to && bytes_ > 0) std::memmove(to, from, static_cast<size_t>(bytes_));
  }
  std::string describe() const override { return "copy"; }
  bool keeps_in_place_promise() const override { return true; }

 private:
  int64_t bytes_;
};

// Values of `n` (inputs from `from` on, outputs from `out_from` on) into rule.row_major.
void all_row_major(LayoutRule& rule, const Node& n, size_t from = 0, size_t out_from = 0) {
  for (size_t i = from; i < n.inputs.size(); ++i) rule.row_major.push_back(n.inputs[i]);
  for (size_t i = out_from; i < n.outputs.size(); ++i) rule.row_major.push_back(n.outputs[i]);
}

bool has_empty_tensor(const Graph& g, const Node& n) {
  for (const auto& list : {n.inputs, n.outputs})
    for (ValueId v : list)
      if (v.valid() && !g.value(v).shape.empty() && element_count(g.value(v).shape, g.value(v).name) == 0) return true;
  return false;
}

}  // namespace

bool has_fast_kernel(const Graph& g, const Node& node) { return fast_kernel(g, node) != FastKernel::kNone; }

const Node* gated_mul_of(const Graph& g, const Node& gate);

const Node* post_op_node(const Graph& g, const Node& conv) { return fusable_activation(g, conv).node; }

const Node* fusion_partner(const Graph& g, const Node& n) {
  if (const Node* mul = gated_mul_of(g, n)) return mul;
  return fused_conv_of(g, n);
}

// The self-gated activation's Mul that `gate` gates (and that computes it), or null.
const Node* gated_mul_of(const Graph& g, const Node& gate) {
  if (!gated_product(gate) || gate.outputs.size() != 1 || !gate.outputs[0].valid()) return nullptr;
  const std::vector<NodeId> readers = g.consumers(gate.outputs[0]);
  if (readers.size() != 1) return nullptr;
  const Node& mul = g.node(readers[0]);
  return gated_input(g, mul) >= 0 ? &mul : nullptr;
}

LayoutRule layout_rule(const Graph& g, const Node& n) {
  LayoutRule rule;
  const FastKernel kind = fast_kernel(g, n);
  if (kind == FastKernel::kNone || n.inputs.empty() || n.outputs.empty() || !n.inputs[0].valid() ||
      !n.outputs[0].valid()) {
    all_row_major(rule, n);
    return rule;
  }
  const ValueId x = n.inputs[0], y = n.outputs[0];
  switch (kind) {
    case FastKernel::kConv:  // the activation in and out each in either order
      all_row_major(rule, n, 1, 1);
      break;
    case FastKernel::kPool:
    case FastKernel::kGlobalPool:
    case FastKernel::kActivation:
    case FastKernel::kBatchNorm:  // the output in the input's order
      rule.ties.push_back({x, y});
      all_row_major(rule, n, 1, 1);
      break;
    case FastKernel::kBinary: {  // full-shape operands share the output's order
      std::vector<ValueId> tie{y};
      for (ValueId v : n.inputs) {
        if (!v.valid()) continue;
        if (g.value(v).shape == g.value(y).shape)
          tie.push_back(v);
        else if (!layout_neutral(g.value(v)))
          rule.row_major.insert(rule.row_major.end(), {v, y});
      }
      rule.ties.push_back(std::move(tie));
      break;
    }
    case FastKernel::kConcat: {  // on channels of 4-d tensors, all in one order
      const auto rank = static_cast<int64_t>(g.value(y).shape.size());
      const int64_t axis = n.int_attr("axis", 0);
      if (rank == 4 && (axis == 1 || axis == -3)) {
        rule.ties.push_back(n.inputs);
        rule.ties.back().push_back(y);
      } else {
        all_row_major(rule, n);
      }
      break;
    }
    case FastKernel::kCopy:  // the same order where the shape stays
      if (g.value(x).shape == g.value(y).shape) {
        rule.ties.push_back({x, y});
        all_row_major(rule, n, 1, 1);
      } else {
        all_row_major(rule, n);
      }
      break;
    default:
      all_row_major(rule, n);
  }
  return rule;
}

std::unique_ptr<PreparedNode> prepare(const Graph& g, const Node& n, const PrepareOptions& options, std::string& why) {
  const FastKernel kind = fast_kernel(g, n);
  if (kind == FastKernel::kNone) {
    why = "no fast kernel for " + n.op;
    return nullptr;
  }
  set_threads(options.threads);
  try {
    if (has_empty_tensor(g, n)) not_fast("an empty tensor");
    if (kind == FastKernel::kCopy) {
      const Value& in = in_value(g, n, 0);
      const Value& out = out_value(g, n);
      for (size_t i = 1; i < n.outputs.size(); ++i)
        if (n.outputs[i].valid()) not_fast("a second output");
      if (in.dtype != out.dtype || element_count(in.shape, in.name) != element_count(out.shape, out.name))
        not_fast("input and output differ in size");
      return std::make_unique<CopyNode>(element_count(in.shape, in.name) * host_element_bytes(in.dtype));
    }
    auto node = std::make_unique<DnnlNode>();
    switch (kind) {
      case FastKernel::kConv:
        prepare_conv(*node, g, n, options);
        break;
      case FastKernel::kConvTranspose:
        prepare_conv_transpose(*node, g, n, options);
        break;
      case FastKernel::kPool:
        prepare_pool(*node, g, n, n.op == "MaxPool", false, options);
        break;
      case FastKernel::kGlobalPool:
        prepare_pool(*node, g, n, n.op == "GlobalMaxPool", true, options);
        break;
      case FastKernel::kGemm:
        prepare_gemm(*node, g, n, options);
        break;
      case FastKernel::kMatMul:
        prepare_matmul(*node, g, n, options);
        break;
      case FastKernel::kActivation:
        if (options.fuse && gated_mul_of(g, n)) return std::make_unique<SkippedNode>();
        if (options.fuse && fused_conv_of(g, n)) {
          const Value& in = in_value(g, n, 0);
          return std::make_unique<ForwardNode>(n.op, element_count(in.shape, in.name) * host_element_bytes(in.dtype),
                                               0);
        }
        prepare_activation(*node, g, n);
        break;
      case FastKernel::kBinary:
        if (const int f = options.fuse ? forwarded_input(g, n) : -1; f >= 0) {
          const Value& in = in_value(g, n, static_cast<size_t>(f));
          return std::make_unique<ForwardNode>(n.op, element_count(in.shape, in.name) * host_element_bytes(in.dtype),
                                               f);
        }
        if (const int x = options.fuse ? gated_input(g, n) : -1; x >= 0)
          prepare_gated(*node, g, n, x);
        else
          prepare_binary(*node, g, n, options);
        break;
      case FastKernel::kBatchNorm:
        prepare_batch_norm(*node, g, n, options);
        break;
      case FastKernel::kSoftmax:
        prepare_softmax(*node, g, n);
        break;
      case FastKernel::kConcat:
        return prepare_concat(g, n, options);
      case FastKernel::kTranspose:
        prepare_transpose(*node, g, n);
        break;
      case FastKernel::kReduceMean:
        prepare_reduce_mean(*node, g, n);
        break;
      case FastKernel::kSlice:
        prepare_slice(*node, g, n);
        break;
      case FastKernel::kNone:  // both returned above
      case FastKernel::kCopy:
        not_fast("no fast kernel");
    }
    return node;
  } catch (const NotFast& e) {
    why = e.why;
  } catch (const dnnl::error& e) {
    why = std::string("oneDNN: ") + e.what();
  } catch (const Error& e) {
    why = e.what();
  }
  return nullptr;
}

}  // namespace memledger::exec::fast
