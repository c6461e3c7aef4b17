#include "memledger/passes/compact_constants.h"

#include <vector>

#include "rewrite.h"

namespace memledger {
namespace {

using passes::broadcast_allows;

constexpr int64_t kMinExpandSavingBytes = 4096;

// Rewrites the uses of one constant; true when it changed anything.
bool compact_one(Graph& graph, ValueId id, const PassOptions& options, PassResult& result) {
  const Value& value = graph.value(id);
  const std::optional<Tensor> compact = passes::compact_tensor(*value.constant);
  if (!compact) return false;
  const std::vector<NodeId> users = graph.consumers(id);
  if (users.empty() || graph.is_graph_output(id)) return false;
  // An Expand is a node and a buffer at run time: only worth it for a sizeable constant.
  const int64_t saved = static_cast<int64_t>(value.constant->bytes().size() - compact->bytes().size());
  bool all_broadcast = true;
  for (NodeId user : users) all_broadcast = all_broadcast && broadcast_allows(graph, user, id, compact->shape());
  if (!all_broadcast && (!options.expand_constants || saved < kMinExpandSavingBytes)) return false;

  const Shape full = value.shape;
  const AxisRoles roles = value.roles;
  const DType dtype = value.dtype;
  const ValueId small = graph.add_constant(graph.unique_name(value.name + "_compact"), *compact, roles);
  ValueId expanded;  // made once, for the consumers that do not broadcast
  for (NodeId user : users) {
    ValueId replacement = small;
    if (!broadcast_allows(graph, user, id, compact->shape())) {
      if (!expanded.valid()) {  // just before its first non-broadcasting user: no longer-lived
        Tensor shape_data(DType::kInt64, {static_cast<int64_t>(full.size())});
        for (size_t d = 0; d < full.size(); ++d) shape_data.data<int64_t>()[d] = full[d];
        const std::string base = graph.value(id).name;
        const ValueId shape_value = graph.add_constant(graph.unique_name(base + "_shape"), shape_data);
        expanded = graph.add_value(
            {.name = graph.unique_name(base + "_expanded"), .dtype = dtype, .shape = full, .roles = roles});
        graph.insert_node_before(user, {.name = graph.unique_name(base + "_expand"),
                                        .op = "Expand",
                                        .inputs = {small, shape_value},
                                        .outputs = {expanded}});
      }
      replacement = expanded;
    }
    graph.replace_uses_in(user, id, replacement);
    ++result.nodes_rewritten;
  }
  return true;
}

}  // namespace

PassResult compact_constants(Graph& graph, const PassOptions& options) {
  PassResult result;
  for (ValueId id : graph.reachable_values())
    if (graph.value(id).is_constant()) compact_one(graph, id, options, result);
  return result;
}

}  // namespace memledger
