#include "memledger/passes/dead_code.h"

#include <vector>

#include "rewrite.h"

namespace memledger {

PassResult dead_code(Graph& graph, const PassOptions&) {
  PassResult result;
  // Backwards, so a node freed by erasing its consumer goes in the same sweep.
  const std::vector<NodeId> order = graph.order();
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (passes::erase_if_unused(graph, *it)) ++result.nodes_rewritten;
  return result;
}

}  // namespace memledger
