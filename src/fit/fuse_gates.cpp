#include "memledger/fit/fuse_gates.h"

#include <unordered_map>
#include <unordered_set>

#include "memledger/ir/op_table.h"
#include "memledger/ir/self_gated.h"

namespace memledger {
namespace {

// The gate node of `mul` when it is x · G(x) as fuse_self_gated takes it, and x.
std::pair<NodeId, ValueId> gate_of(const Graph& g, const Node& mul) {
  const OpRecord* record = find_op(mul);
  if (!record || !record->is("", "Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1) return {};
  for (size_t side = 0; side < 2; ++side) {
    const ValueId s = mul.inputs[side], x = mul.inputs[1 - side];
    if (!s.valid() || !x.valid() || s == x) continue;
    const NodeId producer = g.value(s).producer;
    if (!producer.valid()) continue;
    const Node& gate = g.node(producer);
    if (!is_self_gate(gate) || gate.inputs.size() != 1 || gate.inputs[0] != x || gate.outputs.size() != 1) continue;
    const Value& xv = g.value(x);
    if (xv.dtype != DType::kFloat32 || g.value(s).shape != xv.shape || g.value(mul.outputs[0]).shape != xv.shape ||
        g.value(mul.outputs[0]).dtype != DType::kFloat32)
      continue;
    if (g.is_graph_output(s) || g.consumers(s).size() != 1) continue;
    return {producer, x};
  }
  return {};
}

}  // namespace

FusedGates fuse_self_gated(const Graph& graph) {
  FusedGates result{.graph = graph};
  Graph& g = result.graph;
  std::unordered_map<NodeId, NodeId> replaced;  // Mul → its SelfGated
  std::unordered_set<NodeId> gates;
  for (NodeId n : graph.order()) {
    const Node& mul = graph.node(n);
    const auto [gate, x] = gate_of(graph, mul);
    if (!gate.valid()) continue;
    Node fused = self_gated_node(x, graph.node(gate), mul.outputs[0], mul.name);
    g.erase_node(gate);
    g.erase_node(n);
    replaced[n] = g.add_node(std::move(fused));
    gates.insert(gate);
    ++result.fused;
  }
  if (result.fused == 0) return result;
  std::vector<NodeId> order;
  order.reserve(g.order().size());
  for (NodeId n : graph.order()) {
    if (gates.count(n)) continue;
    const auto it = replaced.find(n);
    order.push_back(it == replaced.end() ? n : it->second);
  }
  g.set_order(std::move(order));
  return result;
}

}  // namespace memledger
