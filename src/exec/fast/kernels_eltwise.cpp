// The fast activations and binary arithmetic (oneDNN eltwise and binary) over the flat
// buffer, and their fusion: an activation after a Conv is the Conv's post-op (the node then
// forwards the Conv's output), a self-gated activation x·gate(x) (SiLU, hard-swish) runs as
// one pass in its Mul (the gate's node does nothing). Which operator is which activation and
// which binary algorithm is here, in two tables; which operators are activations, and whose
// operands commute, is the op table's.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "exec/fast/kernel_common.h"
#include "exec/fast/silu.h"
#include "memledger/ir/integer_node.h"
#include "memledger/ir/op_names.h"
#include "memledger/ir/self_gated.h"

namespace memledger::exec::fast {
namespace {

// An activation or a self-gated activation's Mul fused into the Conv before it: input `input` (the Conv's
// output) is already activated.
class ForwardNode : public PreparedNode {
 public:
  ForwardNode(std::string op, bool gated_mul, int64_t bytes, int input)
      : op_(std::move(op)), gated_mul_(gated_mul), bytes_(bytes), input_(input) {}
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
  bool fused() const override { return gated_mul_; }
  int forwarded_input() const override { return input_; }

 private:
  std::string op_;
  bool gated_mul_;  // a self-gated activation's Mul (not an activation node)
  int64_t bytes_;
  int input_;
};

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

}  // namespace

// The activation's oneDNN post-ops (appended to `ops`).
void append_activation(dnnl::post_ops& ops, const Activation& a) {
  ops.append_eltwise(1.0f, a.alg, a.alpha, a.beta);
  if (a.clip_to_unit) ops.append_eltwise(1.0f, algorithm::eltwise_clip_v2, 0.0f, 1.0f);
}

namespace {

// Which oneDNN eltwise algorithm computes each activation the op table marks for the fast
// set (FastKernel::kActivation; tests/exec/fast_layout_test runs every one of them), and
// its alpha and beta: fixed, or the node's attributes with these defaults.
struct ActivationEntry {
  std::string_view op;
  algorithm alg;
  float alpha = 0, beta = 0;
  std::string alpha_attr = {}, beta_attr = {};
  bool clip_to_unit = false;
  // From this opset on alpha and beta are the node's constant inputs 1 and 2 (Clip's bounds).
  int64_t bounds_as_inputs_since = 0;
  // As a gate (ir/self_gated.h): the one algorithm x·gate(x) runs as (undef: none), with
  // its alpha, for a gate whose alpha and beta are `product_when` (any, when unset).
  algorithm product = algorithm::undef;
  float product_alpha = 0;
  std::optional<std::pair<float, float>> product_when = {};
};
const ActivationEntry kActivations[] = {
    {.op = op::kRelu, .alg = algorithm::eltwise_relu},
    {.op = op::kLeakyRelu, .alg = algorithm::eltwise_relu, .alpha = 0.01f, .alpha_attr = "alpha"},
    {.op = op::kElu, .alg = algorithm::eltwise_elu, .alpha = 1.0f, .alpha_attr = "alpha"},
    {.op = op::kSigmoid,
     .alg = algorithm::eltwise_logistic,
     .product = algorithm::eltwise_swish,
     .product_alpha = 1.0f},
    {.op = op::kTanh, .alg = algorithm::eltwise_tanh},
    {.op = op::kExp, .alg = algorithm::eltwise_exp},
    {.op = op::kAbs, .alg = algorithm::eltwise_abs},
    {.op = op::kSqrt, .alg = algorithm::eltwise_sqrt},
    {.op = op::kNeg, .alg = algorithm::eltwise_linear, .alpha = -1.0f},
    {.op = op::kHardSwish, .alg = algorithm::eltwise_hardswish},
    // alpha·x + beta clipped to [0, 1]; as a gate hard-swish, with PyTorch's alpha 1/6 and
    // beta 1/2 only (x·relu6(x + 3)/6, as torch.onnx writes nn.Hardswish below opset 14).
    {.op = op::kHardSigmoid,
     .alg = algorithm::eltwise_linear,
     .alpha = 0.2f,
     .beta = 0.5f,
     .alpha_attr = "alpha",
     .beta_attr = "beta",
     .clip_to_unit = true,
     .product = algorithm::eltwise_hardswish,
     .product_when = std::pair{1.0f / 6, 0.5f}},
    {.op = op::kClip,
     .alg = algorithm::eltwise_clip_v2,
     .alpha = std::numeric_limits<float>::lowest(),
     .beta = std::numeric_limits<float>::max(),
     .alpha_attr = "min",
     .beta_attr = "max",
     .bounds_as_inputs_since = 11},
};

// Which oneDNN binary algorithm computes each arithmetic operator the op table marks
// FastKernel::kBinary (whether its operands may be swapped is the op table's).
struct BinaryEntry {
  std::string_view op;
  algorithm alg;
};
constexpr BinaryEntry kBinaryOps[] = {{op::kAdd, algorithm::binary_add}, {op::kSub, algorithm::binary_sub},
                                      {op::kMul, algorithm::binary_mul}, {op::kDiv, algorithm::binary_div},
                                      {op::kMax, algorithm::binary_max}, {op::kMin, algorithm::binary_min}};

const ActivationEntry* activation_entry(const Node& n) {
  for (const ActivationEntry& e : kActivations)
    if (e.op == n.op) return &e;
  return nullptr;
}

// The entry's alpha and beta from the node's attributes.
std::pair<float, float> attribute_parameters(const ActivationEntry& e, const Node& n) {
  return {e.alpha_attr.empty() ? e.alpha : n.float_attr(e.alpha_attr, e.alpha),
          e.beta_attr.empty() ? e.beta : n.float_attr(e.beta_attr, e.beta)};
}

}  // namespace

std::vector<std::string_view> activation_table_ops() {
  std::vector<std::string_view> ops;
  for (const ActivationEntry& e : kActivations) ops.push_back(e.op);
  return ops;
}

std::vector<std::string_view> binary_table_ops() {
  std::vector<std::string_view> ops;
  for (const BinaryEntry& e : kBinaryOps) ops.push_back(e.op);
  return ops;
}

Activation activation_of(const Graph& g, const Node& n) {
  const ActivationEntry* e = activation_entry(n);
  if (!e) not_fast("no activation " + n.op);
  if (e->bounds_as_inputs_since > 0 && g.opset >= e->bounds_as_inputs_since)
    return {e->alg, constant_scalar(g, n, 1, e->alpha), constant_scalar(g, n, 2, e->beta), e->clip_to_unit};
  const auto [alpha, beta] = attribute_parameters(*e, n);
  return {e->alg, alpha, beta, e->clip_to_unit};
}

// The product x·gate(x) of a self-gated activation (ir/self_gated.h) as one oneDNN
// algorithm, as the gate's entry above names it; a gate without one keeps its Mul a Mul.
std::optional<Activation> gated_product(const Node& gate) {
  if (!is_self_gate(gate)) return std::nullopt;
  const ActivationEntry* e = activation_entry(gate);
  if (!e || e->product == algorithm::undef) return std::nullopt;
  if (e->product_when && attribute_parameters(*e, gate) != *e->product_when) return std::nullopt;
  return Activation{e->product, e->product_alpha, 0.0f};
}

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
  // A self-gated activation's Mul forwards its x; an activation node its one input.
  const int gated = gated_input(g, node);
  const int x = gated >= 0 ? gated : 0;
  if (node.inputs.size() <= static_cast<size_t>(x) || !node.inputs[static_cast<size_t>(x)].valid()) return -1;
  const NodeId producer = g.value(node.inputs[static_cast<size_t>(x)]).producer;
  if (!producer.valid()) return -1;
  return fusable_activation(g, g.node(producer)).node == &node ? x : -1;
}

// The Conv whose post-op `node` is, or null.
const Node* fused_conv_of(const Graph& g, const Node& node) {
  const int x = forwarded_input(g, node);
  return x < 0 ? nullptr : &g.node(g.value(node.inputs[static_cast<size_t>(x)]).producer);
}

std::unique_ptr<PreparedNode> forward_node(const Graph& g, const Node& n, int input) {
  const Value& in = in_value(g, n, static_cast<size_t>(input));
  return std::make_unique<ForwardNode>(n.op, gated_input(g, n) >= 0,
                                       element_count(in.shape, in.name) * host_element_bytes(in.dtype), input);
}

std::unique_ptr<PreparedNode> skipped_node() { return std::make_unique<SkippedNode>(); }

// The input x of `mul` (0 or 1) when `mul` is a self-gated activation's Mul, x·gate(x), whose gate
// (gated_product) only that Mul reads, in float32 or (an integer Mul) in 8-bit codes; else -1.
int gated_input(const Graph& g, const Node& mul) {
  const GateTypes types = is_integer_node(g, mul) ? GateTypes::kQuantized8 : GateTypes::kFloat32;
  const std::optional<SelfGatedPair> pair = match_self_gated(g, mul, types);
  return pair && gated_product(g.node(pair->gate)) ? pair->x : -1;
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
  const auto op =
      std::find_if(std::begin(kBinaryOps), std::end(kBinaryOps), [&](const BinaryEntry& e) { return e.op == n.op; });
  if (op == std::end(kBinaryOps) || n.inputs.size() != 2) not_fast("not a two-input arithmetic node");
  const OpRecord* record = find_op(n, g.opset);
  const bool commutative = record && record->commutative;
  const Value& yv = out_value(g, n);
  memory::dims y = all_f32_dims(yv);
  int first = 0, second = 1;
  if (in_value(g, n, 0).shape != yv.shape) {
    if (!commutative || in_value(g, n, 1).shape != yv.shape) not_fast("input 0 is broadcast");
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
  const dnnl::binary::desc desc(op->alg, src0.get_desc(), src1.get_desc(), dst.get_desc());
  const auto pd = usable(dnnl::binary::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()), false);
  Args args{{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::binary(pd), std::move(args), std::string("binary ") + pd.impl_info_str());
  node.set_keeps_in_place_promise();
  node.set_in_place_input(first);  // src0 has the output's shape and order
}

const Node* post_op_node(const Graph& g, const Node& conv) { return fusable_activation(g, conv).node; }

const Node* fusion_partner(const Graph& g, const Node& n) {
  if (const Node* mul = gated_mul_of(g, n)) return mul;
  return fused_conv_of(g, n);
}

const Node* gated_mul_of(const Graph& g, const Node& gate) {
  if (!gated_product(gate) || gate.outputs.size() != 1 || !gate.outputs[0].valid()) return nullptr;
  const std::vector<NodeId> readers = g.consumers(gate.outputs[0]);
  if (readers.size() != 1) return nullptr;
  const Node& mul = g.node(readers[0]);
  return gated_input(g, mul) >= 0 ? &mul : nullptr;
}

}  // namespace memledger::exec::fast
