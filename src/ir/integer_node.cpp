#include "memledger/ir/integer_node.h"

namespace memledger {

bool is_integer_node(const Graph& g, const Node& n) {
  const auto quantized = [&](const std::vector<ValueId>& values) {
    return !values.empty() && values[0].valid() && g.value(values[0]).quant.has_value();
  };
  return quantized(n.inputs) || quantized(n.outputs);
}

bool is_quantized_model(const Graph& g) {
  for (NodeId id : g.order()) {
    const Node& n = g.node(id);
    for (const auto* list : {&n.inputs, &n.outputs})
      for (ValueId v : *list)
        if (v.valid() && g.value(v).quant) return true;
  }
  return false;
}

}  // namespace memledger
