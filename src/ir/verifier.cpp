#include "memledger/ir/verifier.h"

#include <set>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/ir/printer.h"

namespace memledger {
namespace {

bool is_elementwise_binary(const Node& n) {
  static const std::set<std::string> ops{"Add", "Sub", "Mul", "Div", "Pow"};
  return n.domain.empty() && ops.count(n.op) != 0;
}

void check_types(const Graph& g, const Node& node) {
  if (is_elementwise_binary(node) && node.inputs.size() == 2 && node.outputs.size() == 1) {
    const Value& a = g.value(node.inputs[0]);
    const Value& b = g.value(node.inputs[1]);
    const Value& y = g.value(node.outputs[0]);
    const Shape expected = broadcast_shapes(a.shape, b.shape, "node " + node.label());
    if (expected != y.shape)
      fail("node {}: output '{}' has shape {} but its inputs broadcast to {}", node.label(), y.name,
           shape_to_string(y.shape), shape_to_string(expected));
    // Pow's exponent may have its own dtype (ONNX opset 12 on); the result has the base's.
    const bool dtypes_agree = node.op == "Pow" ? a.dtype == y.dtype : a.dtype == b.dtype && a.dtype == y.dtype;
    if (!dtypes_agree)
      fail("node {}: dtypes {} and {} → {} do not agree", node.label(), dtype_name(a.dtype), dtype_name(b.dtype),
           dtype_name(y.dtype));
  }
}

}  // namespace

void verify_graph(const Graph& g) {
  std::vector<char> defined(g.value_count(), 0);
  std::vector<char> produced(g.value_count(), 0);
  for (size_t i = 0; i < g.value_count(); ++i) {
    const Value& v = g.value(ValueId{static_cast<int32_t>(i)});
    if (v.roles.size() != v.shape.size())
      fail("value '{}': {} axis roles for rank {}", v.name, v.roles.size(), v.shape.size());
    if (v.is_constant()) {
      if (v.constant->dtype() != v.dtype || v.constant->shape() != v.shape)
        fail("constant '{}': data {}{} does not match its type {}", v.name, dtype_name(v.constant->dtype()),
             shape_to_string(v.constant->shape()), describe_value_type(v));
      defined[i] = 1;
    }
  }
  for (ValueId in : g.inputs()) {
    if (g.value(in).is_constant()) fail("graph input '{}' is also a constant", g.value(in).name);
    defined[static_cast<size_t>(in.index)] = 1;
  }
  for (NodeId n : g.order()) {
    const Node& node = g.node(n);
    for (ValueId in : node.inputs) {
      if (!in.valid()) continue;
      if (!defined[static_cast<size_t>(in.index)])
        fail("node {}: input '{}' is used before it is defined (a cycle or a dangling name)", node.label(),
             g.value(in).name);
    }
    for (ValueId out : node.outputs) {
      const size_t i = static_cast<size_t>(out.index);
      if (produced[i] || g.value(out).is_constant() || g.is_graph_input(out))
        fail("node {}: output '{}' is already defined elsewhere", node.label(), g.value(out).name);
      if (g.value(out).producer != n)
        fail("node {}: output '{}' does not name this node as its producer", node.label(), g.value(out).name);
      produced[i] = defined[i] = 1;
    }
    check_types(g, node);
  }
  for (ValueId out : g.outputs())
    if (!out.valid() || !defined[static_cast<size_t>(out.index)])
      fail("graph output '{}' is never defined", out.valid() ? g.value(out).name : "?");
}

}  // namespace memledger
