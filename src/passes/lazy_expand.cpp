#include "memledger/passes/lazy_expand.h"

#include <vector>

#include "rewrite.h"

namespace memledger {
namespace {

// Expand always broadcasts; Tile only when every axis it repeats has extent 1.
bool is_broadcast_copy(const Graph& graph, const Node& node) {
  if (!node.domain.empty() || node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  if (node.op == "Expand") return true;
  if (node.op != "Tile") return false;
  const auto repeats = passes::int_values(graph, node.inputs[1]);
  const Shape& x = graph.value(node.inputs[0]).shape;
  if (!repeats || repeats->size() != x.size()) return false;
  for (size_t d = 0; d < x.size(); ++d)
    if ((*repeats)[d] != 1 && x[d] != 1) return false;
  return true;
}

}  // namespace

PassResult lazy_expand(Graph& graph, const PassOptions&) {
  PassResult result;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order) {
    const Node& node = graph.node(id);
    if (!is_broadcast_copy(graph, node)) continue;
    const ValueId source = node.inputs[0];
    const ValueId expanded = node.outputs[0];
    const Shape source_shape = graph.value(source).shape;
    bool rewired = false;
    for (NodeId user : graph.consumers(expanded)) {
      if (!passes::broadcast_allows(graph, user, expanded, source_shape)) continue;
      graph.replace_uses_in(user, expanded, source);
      rewired = true;
    }
    if (rewired) {
      ++result.nodes_rewritten;
      passes::erase_if_unused(graph, id);
    }
  }
  return result;
}

}  // namespace memledger
