#include "memledger/passes/fold_constants.h"

#include <algorithm>

#include "memledger/core/error.h"
#include "rewrite.h"

namespace memledger {
namespace {

bool is_identity_like(const Node& node) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return false;
  if (node.op == "Identity") return true;
  // Dropout in inference: training_mode absent or a constant false; the mask output unused.
  if (node.op != "Dropout") return false;
  if (node.inputs.size() > 2 && node.inputs[2].valid()) return false;
  return node.outputs.size() < 2 || !node.outputs[1].valid();
}

// Forwards an Identity-like node's constant input to its readers; false when it cannot
// (not a constant, or the output is a graph output, which keeps its name and producer).
bool forward_constant(Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  if (!is_identity_like(node) || node.inputs.empty() || !passes::constant_of(graph, node.inputs[0])) return false;
  const ValueId out = node.outputs.at(0);
  if (graph.is_graph_output(out)) return false;
  if (node.outputs.size() > 1 && node.outputs[1].valid() && !graph.consumers(node.outputs[1]).empty()) return false;
  graph.replace_all_uses(out, node.inputs[0]);
  graph.erase_node(id);
  return true;
}

int64_t constant_input_bytes(const Graph& graph, const Node& node) {
  int64_t total = 0;
  for (ValueId v : node.inputs)
    if (v.valid()) total += static_cast<int64_t>(graph.value(v).constant->bytes().size());
  return total;
}

}  // namespace

PassResult fold_identity_constants(Graph& graph) {
  PassResult result;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order)
    if (forward_constant(graph, id)) ++result.nodes_rewritten;
  return result;
}

PassResult fold_constants(Graph& graph, const PassOptions& options) {
  PassResult result;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order) {
    if (forward_constant(graph, id)) {
      ++result.nodes_rewritten;
      continue;
    }
    const Node& node = graph.node(id);
    if (node.inputs.empty() || !options.evaluate) continue;
    bool all_constant = true;
    for (ValueId v : node.inputs) all_constant = all_constant && (!v.valid() || graph.value(v).is_constant());
    if (!all_constant) continue;
    // The size limit: the folded outputs may not take more bytes than the constant inputs
    // they replace (a growing fold stays a run-time broadcast).
    int64_t out_bytes = 0;
    bool output_of_graph = false;
    for (ValueId v : node.outputs) {
      if (!v.valid()) continue;
      const Value& value = graph.value(v);
      out_bytes += element_count(value.shape, value.name) * host_element_bytes(value.dtype);
      output_of_graph = output_of_graph || graph.is_graph_output(v);
    }
    if (output_of_graph || out_bytes > constant_input_bytes(graph, node)) continue;
    std::optional<std::vector<Tensor>> values = options.evaluate(graph, node);
    if (!values) continue;  // no kernel, or one that refuses these values: the run reports it
    const std::vector<ValueId> outs = node.outputs;
    size_t next = 0;
    for (ValueId v : outs) {
      if (!v.valid()) continue;
      const Value& value = graph.value(v);
      const ValueId c = graph.add_constant(graph.unique_name(value.name), std::move((*values)[next++]), value.roles);
      graph.replace_all_uses(v, c);
    }
    graph.erase_node(id);
    ++result.nodes_rewritten;
  }
  return result;
}

}  // namespace memledger
