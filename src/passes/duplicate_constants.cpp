#include "memledger/passes/duplicate_constants.h"

#include <map>
#include <string>
#include <tuple>

#include "rewrite.h"

namespace memledger {
namespace {

// Equal when dtype, shape and every byte agree.
using ConstantKey = std::tuple<DType, Shape, std::string>;

ConstantKey key_of(const Tensor& t) {
  const auto b = t.bytes();
  return {t.dtype(), t.shape(), std::string(reinterpret_cast<const char*>(b.data()), b.size())};
}

}  // namespace

PassResult duplicate_constants(Graph& graph, const PassOptions&) {
  PassResult result;
  std::map<ConstantKey, ValueId> first;
  for (ValueId id : graph.reachable_values()) {
    const Value& v = graph.value(id);
    // Quantized constants are equal only with equal parameters: left alone.
    if (!v.is_constant() || v.quant || graph.is_graph_output(id)) continue;
    const auto [it, inserted] = first.emplace(key_of(*v.constant), id);
    if (inserted) continue;
    for (NodeId user : graph.consumers(id)) {
      graph.replace_uses_in(user, id, it->second);
      ++result.nodes_rewritten;
    }
  }
  return result;
}

}  // namespace memledger
