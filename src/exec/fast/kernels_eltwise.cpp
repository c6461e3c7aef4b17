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

#include "exec/activation_functions.h"
#include "exec/fast/kernel_common.h"
#include "exec/fast/parallel.h"
#include "exec/fast/silu.h"
#include "memledger/ir/erf_gelu.h"
#include "memledger/ir/integer_node.h"
#include "memledger/ir/op_names.h"
#include "memledger/ir/self_gated.h"

namespace memledger::exec::fast {
namespace {

// An activation or a self-gated activation's Mul fused into the Conv before it: input `input` (the Conv's
// output) is already activated.
class ForwardNode : public PreparedNode {
 public:
  ForwardNode(std::string description, bool gated_mul, int64_t bytes, int input)
      : description_(std::move(description)), gated_mul_(gated_mul), bytes_(bytes), input_(input) {}
  int64_t workspace_bytes() const override { return 0; }
  void run(KernelContext& ctx) override {
    const std::byte* from = ctx.in(static_cast<size_t>(input_)).data;
    std::byte* to = ctx.out(0).data;
    if (from != to && bytes_ > 0) std::memmove(to, from, static_cast<size_t>(bytes_));
  }
  std::string describe() const override { return description_; }
  bool keeps_in_place_promise() const override { return true; }
  bool relies_on_fusion() const override { return true; }
  // The gate (a SiLU's Sigmoid) relies on its Mul: computed here, by the Conv.
  bool fused() const override { return gated_mul_; }
  int forwarded_input() const override { return input_; }

 private:
  std::string description_;
  bool gated_mul_;  // a self-gated activation's Mul (not an activation node)
  int64_t bytes_;
  int input_;
};

// A node whose work another does: a gate's (its self-gated activation's Mul), or a part of
// an erf GELU's (its inner Mul).
class SkippedNode : public PreparedNode {
 public:
  explicit SkippedNode(std::string description) : description_(std::move(description)) {}
  int64_t workspace_bytes() const override { return 0; }
  void run(KernelContext&) override {}
  std::string describe() const override { return description_; }
  bool keeps_in_place_promise() const override { return true; }
  bool relies_on_fusion() const override { return true; }

 private:
  std::string description_;
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
// its alpha and beta: fixed, or the node's attributes with these defaults. Where oneDNN has
// no algorithm (undef: Erf, Log, ...), the fast set runs the reference kernels' element
// function (exec/activation_functions.h) as its own loop over the flat buffer, on the run's
// threads: the reference's bits, in either byte order, so a channels-last run goes on
// through the node.
struct ActivationEntry {
  std::string_view op;
  algorithm alg;
  float alpha = 0, beta = 0;
  std::string alpha_attr = {}, beta_attr = {};
  bool clip_to_unit = false;
  // From this opset on alpha and beta are the node's constant inputs 1 and 2 (Clip's bounds).
  int64_t bounds_as_inputs_since = 0;
  // Pow: the exponent is the node's input 1, a constant float scalar (pow_activation).
  bool exponent_input = false;
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
    // x^e for a constant scalar e: the variance of an exported LayerNorm or the cube of a tanh
    // GELU (convnext, vision transformers).
    {.op = op::kPow, .alg = algorithm::eltwise_pow, .alpha = 1.0f, .exponent_input = true},
    {.op = op::kErf, .alg = algorithm::undef},
    {.op = op::kLog, .alg = algorithm::undef},
    {.op = op::kReciprocal, .alg = algorithm::undef},
    {.op = op::kFloor, .alg = algorithm::undef},
    {.op = op::kCeil, .alg = algorithm::undef},
    {.op = op::kSoftplus, .alg = algorithm::undef},
};

// x^e as the oneDNN algorithm that gives std::pow's bits where one does: x·x for e = 2 (the
// square is exact in double, so powf rounds it as the product does), sqrt for 1/2, x for 1;
// else oneDNN's pow (within its tolerance, not bit for bit).
Activation pow_activation(float e) {
  if (e == 2.0f) return {algorithm::eltwise_square};
  if (e == 1.0f) return {algorithm::eltwise_linear, 1.0f, 0.0f};
  if (e == 0.5f) return {algorithm::eltwise_sqrt};
  return {algorithm::eltwise_pow, 1.0f, e};
}

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
  if (e->exponent_input) {
    if (!has_in(n, 1)) not_fast("no exponent");
    return pow_activation(constant_scalar(g, n, 1, 1.0f));
  }
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
  return std::make_unique<ForwardNode>(n.op + " fused into the Conv before it", gated_input(g, n) >= 0,
                                       element_count(in.shape, in.name) * host_element_bytes(in.dtype), input);
}

std::unique_ptr<PreparedNode> skipped_node() {
  return std::make_unique<SkippedNode>("nothing (the Mul it gates computes it)");
}

std::unique_ptr<PreparedNode> erf_gelu_part(const Graph& g, const Node& n) {
  const std::optional<ErfGelu> gelu = erf_gelu_of(g, n);
  if (!gelu) return nullptr;
  const NodeId self = g.value(n.outputs[0]).producer;
  if (self == gelu->mul) return nullptr;
  if (self != gelu->half) return std::make_unique<SkippedNode>("nothing (the erf GELU's inner Mul computes it)");
  const Node& mul = g.node(gelu->mul);
  const int input = n.inputs[0] == mul.outputs[0] ? 0 : 1;
  const Value& in = in_value(g, n, static_cast<size_t>(input));
  return std::make_unique<ForwardNode>("the erf GELU's inner Mul's output (it computes the GELU)", false,
                                       element_count(in.shape, in.name) * host_element_bytes(in.dtype), input);
}

bool prepare_erf_gelu(DnnlNode& node, const Graph& g, const Node& mul) {
  const std::optional<ErfGelu> gelu = match_erf_gelu(g, mul);
  if (!gelu) return false;
  const Value& xv = g.value(gelu->x);
  const memory::dims flat{std::max<int64_t>(element_count(xv.shape, xv.name), 1)};
  const memory::desc desc = plain_desc(flat, dt::f32);
  try {  // where oneDNN has no fast GELU, the five nodes compute one by one (a step is added only once made)
    add_eltwise(node, node.input(gelu->mul_x, desc), node.output(0, desc), {algorithm::eltwise_gelu_erf}, "gelu (erf)");
  } catch (const NotFast&) {
    return false;
  }
  // y = GELU(x) element by element from x alone: wherever the plan puts it over x or over
  // the Add's output (never written), the node keeps it.
  node.set_keeps_in_place_promise();
  node.set_in_place_input(gelu->mul_x);
  node.set_fused();
  return true;
}

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
  const int64_t count = element_count(xv.shape, xv.name);
  const Activation a = activation_of(g, n);
  if (a.alg == algorithm::undef) {
    const exec::ActivationFunction f = exec::activation_function(n);
    if (!f) not_fast("no element function for " + n.op);
    // Element by element from its own input: any split gives the same bits, in place too.
    node.add_loop(
        [f, count](KernelContext& ctx) {
          const auto* x = reinterpret_cast<const float*>(ctx.in(0).data);
          auto* y = reinterpret_cast<float*>(ctx.out(0).data);
          parallel_ranges(count, kLoopGrain,
                          [&](int64_t begin, int64_t end, int) { f(x + begin, y + begin, end - begin); });
        },
        n.op + " (memledger, the reference's element function)");
  } else {
    const memory::dims flat{std::max<int64_t>(count, 1)};
    add_eltwise(node, node.input(0, plain_desc(flat, dt::f32)), node.output(0, plain_desc(flat, dt::f32)), a,
                "eltwise");
  }
  node.set_keeps_in_place_promise();
  node.set_in_place_input(0);
}

namespace {

// Row-major operands: adjacent axes on which the broadcast operand `b` is alike (full on both,
// or 1 on both) are one axis to oneDNN, after a leading 1. So a LayerNorm's mean over the last
// axis, [1,56,56,1] against [1,56,56,96], is a per-channel operand of [1, 3136, 96], a form
// oneDNN's jit binary takes (it refused the 4-d one for its reference kernel), and the
// bytes are the same.
void collapse_broadcast(memory::dims& y, memory::dims& b) {
  memory::dims cy{1}, cb{1};
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] == 1) continue;
    const bool full = b[i] != 1;
    if (cy.size() > 1 && (cb.back() != 1) == full) {
      cy.back() *= y[i];
      cb.back() *= b[i];
    } else {
      cy.push_back(y[i]);
      cb.push_back(b[i]);
    }
  }
  y = std::move(cy);
  b = std::move(cb);
}

}  // namespace

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
  if (!cl) collapse_broadcast(y, b);
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
  if (const std::optional<ErfGelu> gelu = erf_gelu_of(g, n); gelu && &g.node(gelu->mul) != &n)
    return &g.node(gelu->mul);
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
