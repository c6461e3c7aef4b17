#include "memledger/fit/fuse_gates.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "memledger/ir/self_gated.h"

namespace memledger {

FusedGates fuse_self_gated(const Graph& graph) {
  FusedGates result{.graph = graph};
  Graph& g = result.graph;
  std::unordered_map<NodeId, NodeId> replaced;  // Mul → its SelfGated
  std::unordered_set<NodeId> gates;
  for (NodeId n : graph.order()) {
    const Node& mul = graph.node(n);
    const std::optional<SelfGatedPair> pair = match_self_gated(graph, mul);
    if (!pair) continue;
    const NodeId gate = pair->gate;
    Node fused = self_gated_node(mul.inputs[static_cast<size_t>(pair->x)], graph.node(gate), mul.outputs[0], mul.name);
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
