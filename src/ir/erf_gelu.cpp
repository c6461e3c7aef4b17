#include "memledger/ir/erf_gelu.h"

#include <cmath>

#include "memledger/ir/op_names.h"

namespace memledger {
namespace {

// A float32 constant of one element within a millionth of `want`.
bool constant_near(const Graph& g, ValueId v, double want) {
  if (!v.valid()) return false;
  const Value& value = g.value(v);
  if (!value.is_constant() || value.dtype != DType::kFloat32 || value.constant->elements() != 1) return false;
  return std::fabs(value.constant->element_as_double(0) - want) <= 1e-6 * std::fabs(want);
}

// The producer of `v` when it is a default-domain `op` with two inputs or one, else null.
const Node* producer_op(const Graph& g, ValueId v, std::string_view op) {
  if (!v.valid() || !g.value(v).producer.valid()) return nullptr;
  const Node& n = g.node(g.value(v).producer);
  return n.domain.empty() && n.op == op && n.outputs.size() == 1 ? &n : nullptr;
}

// The input of two-input `n` that is not the constant near `want` (its index), or -1.
int other_than_constant(const Graph& g, const Node& n, double want) {
  if (n.inputs.size() != 2) return -1;
  for (int k = 0; k < 2; ++k)
    if (constant_near(g, n.inputs[static_cast<size_t>(1 - k)], want)) return k;
  return -1;
}

// Input `index` of `n` is `v` (false for index -1).
bool is_input(const Node& n, int index, ValueId v) { return index >= 0 && n.inputs[static_cast<size_t>(index)] == v; }

// `v` is read by `reader` only, and is no graph output.
bool read_once_by(const Graph& g, ValueId v, const Node& reader) {
  if (g.is_graph_output(v)) return false;
  const std::vector<NodeId> readers = g.consumers(v);
  return readers.size() == 1 && &g.node(readers[0]) == &reader;
}

// The only reader of `n`'s one output, or null.
const Node* only_reader(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1 || !n.outputs[0].valid() || g.is_graph_output(n.outputs[0])) return nullptr;
  const std::vector<NodeId> readers = g.consumers(n.outputs[0]);
  return readers.size() == 1 ? &g.node(readers[0]) : nullptr;
}

}  // namespace

std::optional<ErfGelu> match_erf_gelu(const Graph& g, const Node& mul) {
  if (!mul.domain.empty() || mul.op != op::kMul || mul.inputs.size() != 2 || mul.outputs.size() != 1)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const ValueId x = mul.inputs[static_cast<size_t>(side)], a = mul.inputs[static_cast<size_t>(1 - side)];
    const Node* add = producer_op(g, a, op::kAdd);
    if (!x.valid() || !add) continue;
    const int e_side = other_than_constant(g, *add, 1.0);
    if (e_side < 0) continue;
    const ValueId e = add->inputs[static_cast<size_t>(e_side)];
    const Node* erf = producer_op(g, e, op::kErf);
    if (!erf || erf->inputs.size() != 1) continue;
    const ValueId d = erf->inputs[0];
    const Node* div = producer_op(g, d, op::kDiv);
    if (div && !(div->inputs.size() == 2 && div->inputs[0] == x && constant_near(g, div->inputs[1], std::sqrt(2.0))))
      div = nullptr;
    if (!div) {
      div = producer_op(g, d, op::kMul);
      if (div && !is_input(*div, other_than_constant(g, *div, std::sqrt(0.5)), x)) div = nullptr;
    }
    if (!div) continue;
    const Node* half = only_reader(g, mul);
    if (!half || !half->domain.empty() || half->op != op::kMul ||
        !is_input(*half, other_than_constant(g, *half, 0.5), mul.outputs[0]))
      continue;
    if (!read_once_by(g, d, *erf) || !read_once_by(g, e, *add) || !read_once_by(g, a, mul) ||
        !read_once_by(g, mul.outputs[0], *half))
      continue;
    const Shape& shape = g.value(x).shape;
    bool alike = g.value(x).dtype == DType::kFloat32;
    for (ValueId v : {d, e, a, mul.outputs[0], half->outputs[0]})
      alike = alike && g.value(v).dtype == DType::kFloat32 && g.value(v).shape == shape;
    if (!alike) continue;
    auto id = [&](const Node* n) { return g.value(n->outputs[0]).producer; };
    return ErfGelu{
        .x = x, .div = id(div), .erf = id(erf), .add = id(add), .mul = id(&mul), .half = id(half), .mul_x = side};
  }
  return std::nullopt;
}

std::optional<ErfGelu> erf_gelu_of(const Graph& g, const Node& node) {
  if (node.outputs.size() != 1 || !node.outputs[0].valid()) return std::nullopt;
  const NodeId self = g.value(node.outputs[0]).producer;
  // The inner Mul is the node itself, a reader up to three on (from the Div, the Erf, the
  // Add), or the producer of an input (from the last Mul).
  std::vector<const Node*> candidates{&node};
  for (const Node* n = only_reader(g, node); n && candidates.size() < 4; n = only_reader(g, *n))
    candidates.push_back(n);
  for (ValueId v : node.inputs)
    if (const Node* p = producer_op(g, v, op::kMul)) candidates.push_back(p);
  for (const Node* c : candidates) {
    const std::optional<ErfGelu> m = match_erf_gelu(g, *c);
    if (m && (self == m->div || self == m->erf || self == m->add || self == m->mul || self == m->half)) return m;
  }
  return std::nullopt;
}

}  // namespace memledger
