#include "memledger/passes/unit_coefficient.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "memledger/ir/affine.h"
#include "memledger/ir/op_table.h"
#include "rewrite.h"

namespace memledger {
namespace {

using passes::all_near;
using passes::constant_of;

// y = x when the node's output has x's type and shape.
bool drop(Graph& graph, NodeId id, ValueId x) {
  const ValueId y = graph.node(id).outputs[0];
  const Value &xv = graph.value(x), &yv = graph.value(y);
  if (xv.dtype != yv.dtype || xv.shape != yv.shape) return false;
  if (!passes::forward_value(graph, y, x)) return false;
  graph.erase_node(id);
  return true;
}

bool simplify_affine(Graph& graph, NodeId id, double tol) {
  const Node& n = graph.node(id);
  const Tensor* scale = constant_of(graph, n.inputs[1]);
  const Tensor* bias = constant_of(graph, n.inputs[2]);
  if (scale == nullptr || !all_near(*scale, 1.0, tol)) return false;
  if (bias != nullptr && all_near(*bias, 0.0)) return drop(graph, id, n.inputs[0]);
  // A bias add: x + bias has x's shape (the Affine never grows x).
  graph.set_inputs(id, {n.inputs[0], n.inputs[2]});
  graph.set_op(id, "Add");
  graph.attributes(id).clear();
  return true;
}

bool simplify_binary(Graph& graph, NodeId id, double tol) {
  const Node& n = graph.node(id);
  if (!n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  const OpRecord* r = find_op(n, graph.opset);
  if (r == nullptr || r->identity_operand == kNoIdentityOperand) return false;
  const double unit = r->identity_operand;
  const double t = unit == 1.0 ? tol : 0.0;
  for (size_t side = 0; side < 2; ++side) {
    if (side == 0 && !r->commutative) continue;  // 1/x and 0 − x are not x
    const Tensor* c = constant_of(graph, n.inputs[side]);
    if (c != nullptr && all_near(*c, unit, t)) return drop(graph, id, n.inputs[1 - side]);
  }
  return false;
}

bool same_constant(const Graph& graph, ValueId a, ValueId b) {
  if (a == b) return true;
  const Tensor *ta = constant_of(graph, a), *tb = constant_of(graph, b);
  return ta != nullptr && tb != nullptr && *ta == *tb;
}

// DequantizeLinear(q, s, z) → QuantizeLinear(·, s, z) with the float used only there: q
// itself. With other parameters the pair stays: it is the requantize.
bool simplify_qdq(Graph& graph, NodeId id) {
  const Node& q = graph.node(id);
  if (!q.domain.empty() || q.op != "QuantizeLinear" || q.inputs.size() < 2) return false;
  const ValueId f = q.inputs[0];
  const NodeId dq_id = passes::producer_of(graph, f);
  if (!dq_id.valid() || graph.consumers(f).size() != 1 || graph.is_graph_output(f)) return false;
  const Node& dq = graph.node(dq_id);
  if (!dq.domain.empty() || dq.op != "DequantizeLinear" || dq.inputs.size() < 2) return false;
  if (q.int_attr("axis", 1) != dq.int_attr("axis", 1)) return false;
  const ValueId zq = q.inputs.size() > 2 ? q.inputs[2] : ValueId{};
  const ValueId zd = dq.inputs.size() > 2 ? dq.inputs[2] : ValueId{};
  if (!same_constant(graph, q.inputs[1], dq.inputs[1])) return false;
  if (zq.valid() != zd.valid() || (zq.valid() && !same_constant(graph, zq, zd))) return false;
  const ValueId source = dq.inputs[0];
  if (!drop(graph, id, source)) return false;
  passes::erase_if_unused(graph, dq_id);
  return true;
}

// An 8-bit quantized value's range relative to its zero point, [qmin − z, qmax − z], for a
// per-tensor zero point `zero` (absent: 0) of type `type`; nothing for other types.
std::optional<std::pair<int64_t, int64_t>> relative_range(const Graph& graph, ValueId zero, DType type) {
  int64_t z = 0;
  if (zero.valid()) {
    const Tensor* t = constant_of(graph, zero);
    if (t == nullptr || t->elements() != 1 || t->dtype() != type) return std::nullopt;
    z = static_cast<int64_t>(t->element_as_double(0));
  }
  if (type == DType::kInt8) return std::pair{-128 - z, 127 - z};
  if (type == DType::kUInt8) return std::pair{-z, 255 - z};
  return std::nullopt;
}

ValueId input_or_none(const Node& n, size_t i) { return n.inputs.size() > i ? n.inputs[i] : ValueId{}; }

// f = DequantizeLinear(a, s, za) → QuantizeLinear(·, s, zb) → DequantizeLinear(·, s, zb): a
// requantize with a unit scale ratio whose zero points only shift the same range (int8
// with za, uint8 with zb = za + 128). Every value of f lies on the second grid and inside
// its range, so the round trip returns f exactly: the second pair goes and one
// Q → DQ pair is left.
bool simplify_requantize_round_trip(Graph& graph, NodeId id) {
  const Node& dq_b = graph.node(id);
  if (!dq_b.domain.empty() || dq_b.op != "DequantizeLinear" || dq_b.inputs.size() < 2) return false;
  const ValueId qb = dq_b.inputs[0];
  const NodeId q_id = passes::producer_of(graph, qb);
  if (!q_id.valid() || graph.consumers(qb).size() != 1 || graph.is_graph_output(qb)) return false;
  const Node& q = graph.node(q_id);
  if (!q.domain.empty() || q.op != "QuantizeLinear" || q.inputs.size() < 2) return false;
  if (!same_constant(graph, q.inputs[1], dq_b.inputs[1])) return false;
  const ValueId zq = input_or_none(q, 2), zd = input_or_none(dq_b, 2);
  if (zq.valid() != zd.valid() || (zq.valid() && !same_constant(graph, zq, zd))) return false;
  const ValueId f = q.inputs[0];
  const NodeId dq_a_id = passes::producer_of(graph, f);
  if (!dq_a_id.valid()) return false;
  const Node& dq_a = graph.node(dq_a_id);
  if (!dq_a.domain.empty() || dq_a.op != "DequantizeLinear" || dq_a.inputs.size() < 2) return false;
  const Tensor *sa = constant_of(graph, dq_a.inputs[1]), *sb = constant_of(graph, q.inputs[1]);
  if (sa == nullptr || sb == nullptr || sa->elements() != 1 || sb->elements() != 1 || sa->dtype() != DType::kFloat32 ||
      sb->dtype() != DType::kFloat32 || sa->element_as_double(0) != sb->element_as_double(0))
    return false;
  const auto range_a = relative_range(graph, input_or_none(dq_a, 2), graph.value(dq_a.inputs[0]).dtype);
  const auto range_b = relative_range(graph, zq, graph.value(qb).dtype);
  if (!range_a || !range_b || *range_a != *range_b) return false;
  if (!drop(graph, id, f)) return false;
  passes::erase_if_unused(graph, q_id);
  return true;
}

}  // namespace

PassResult unit_coefficient(Graph& graph, const PassOptions& options) {
  PassResult result;
  const double tol = options.approximate_tolerance > 0 ? options.approximate_tolerance : 0.0;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order) {
    if (!graph.is_live(id)) continue;
    const bool changed = is_affine(graph.node(id)) ? simplify_affine(graph, id, tol)
                                                   : simplify_binary(graph, id, tol) || simplify_qdq(graph, id) ||
                                                         simplify_requantize_round_trip(graph, id);
    if (changed) ++result.nodes_rewritten;
  }
  return result;
}

}  // namespace memledger
