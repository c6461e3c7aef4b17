#include "exec/fast/layout.h"

#include <numeric>

#include "memledger/ir/op_table.h"

namespace memledger::exec::fast {
namespace {

// Classes of values that share one byte order.
class Classes {
 public:
  explicit Classes(size_t values) : parent_(values) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t find(size_t v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }
  void join(size_t a, size_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<size_t> parent_;
};

}  // namespace

bool layout_neutral(const Value& v) {
  const bool activation = v.dtype == DType::kFloat32 || v.dtype == DType::kInt8 || v.dtype == DType::kUInt8;
  if (!activation || v.shape.size() != 4) return true;
  return v.shape[2] * v.shape[3] <= 1;
}

PreparedGraph prepare_graph(const Graph& graph, PrepareOptions options,
                            const std::function<std::string(const Node&)>& blocker) {
  const auto& order = graph.order();
  const size_t values = graph.value_count();
  PreparedGraph out;
  out.nodes.resize(order.size());
  out.why.resize(order.size());

  // Which nodes may run fast at all, and the classes their rules tie together.
  std::vector<uint8_t> may_be_fast(order.size(), 0);
  std::vector<uint8_t> row_major(values, 0);
  Classes classes(values);
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& node = graph.node(order[i]);
    if (has_fast_kernel(graph, node)) {
      out.why[i] = blocker(node);
      may_be_fast[i] = out.why[i].empty();
    } else {
      out.why[i] = "no fast kernel for " + node.op;
    }
    LayoutRule rule;
    if (may_be_fast[i])
      rule = layout_rule(graph, node);
    else {
      rule.row_major = node.inputs;
      rule.row_major.insert(rule.row_major.end(), node.outputs.begin(), node.outputs.end());
    }
    for (ValueId v : rule.row_major)
      if (v.valid()) row_major[static_cast<size_t>(v.index)] = 1;
    for (const auto& tie : rule.ties) {
      ValueId first;
      for (ValueId v : tie) {
        if (!v.valid() || layout_neutral(graph.value(v))) continue;
        if (first.valid())
          classes.join(static_cast<size_t>(v.index), static_cast<size_t>(first.index));
        else
          first = v;
      }
    }
  }
  for (ValueId v : graph.inputs()) row_major[static_cast<size_t>(v.index)] = 1;
  for (ValueId v : graph.outputs()) row_major[static_cast<size_t>(v.index)] = 1;

  // A class is channels-last when none of its values must be row-major. Only values a node
  // reads or writes have an order: a value no node touches (one an import rewrite left behind,
  // the float output of a folded DequantizeLinear) is no activation and is not counted.
  std::vector<uint8_t> touched(values, 0);
  for (NodeId n : order)
    for (const auto& list : {graph.node(n).inputs, graph.node(n).outputs})
      for (ValueId v : list)
        if (v.valid()) touched[static_cast<size_t>(v.index)] = 1;
  std::vector<uint8_t> class_row_major(values, 0);
  for (size_t v = 0; v < values; ++v) {
    const Value& value = graph.value(ValueId{static_cast<int32_t>(v)});
    if (row_major[v] || value.is_constant() || layout_neutral(value)) class_row_major[classes.find(v)] = 1;
  }
  out.channels_last.assign(values, 0);
  for (size_t v = 0; v < values; ++v) out.channels_last[v] = touched[v] && !class_row_major[classes.find(v)] ? 1 : 0;

  // Prepare; a node oneDNN cannot take in the chosen order turns its classes row-major,
  // and every node touching them is prepared again.
  options.channels_last = &out.channels_last;
  std::vector<uint8_t> dirty(may_be_fast);
  std::vector<uint8_t> no_fusion(order.size(), 0);  // a node that must compute after all
  auto position_of = [&](const Node* node) {
    for (size_t j = 0; j < order.size(); ++j)
      if (&graph.node(order[j]) == node) return j;
    return order.size();
  };
  auto touches = [&](const Node& node, auto&& pred) {
    for (const auto& list : {node.inputs, node.outputs})
      for (ValueId v : list)
        if (v.valid() && pred(static_cast<size_t>(v.index))) return true;
    return false;
  };
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < order.size(); ++i) {
      if (!dirty[i]) continue;
      dirty[i] = 0;
      const Node& node = graph.node(order[i]);
      std::string why;
      PrepareOptions node_options = options;
      node_options.fuse = options.fuse && !no_fusion[i];
      out.nodes[i] = prepare(graph, node, node_options, why);
      out.why[i] = out.nodes[i] ? std::string() : why;
      if (out.nodes[i] || !touches(node, [&](size_t v) { return out.channels_last[v] != 0; })) continue;
      std::vector<uint8_t> demoted(values, 0);
      for (const auto& list : {node.inputs, node.outputs})
        for (ValueId v : list)
          if (v.valid() && out.channels_last[static_cast<size_t>(v.index)])
            demoted[classes.find(static_cast<size_t>(v.index))] = 1;
      for (size_t v = 0; v < values; ++v)
        if (demoted[classes.find(v)]) out.channels_last[v] = 0;
      for (size_t j = 0; j < order.size(); ++j)
        if (may_be_fast[j] && touches(graph.node(order[j]), [&](size_t v) { return demoted[classes.find(v)] != 0; }))
          dirty[j] = 1;
      again = true;
    }
    // A node left out for a fusion its partner did not make computes after all.
    for (size_t i = 0; i < order.size(); ++i) {
      if (!out.nodes[i] || !out.nodes[i]->relies_on_fusion()) continue;
      const size_t j = position_of(fusion_partner(graph, graph.node(order[i])));
      if (j < order.size() && out.nodes[j] && out.nodes[j]->fused()) continue;
      no_fusion[i] = 1;
      dirty[i] = 1;
      again = true;
    }
    // A Conv whose post-op is not idempotent (a SiLU, a Sigmoid: the op table says) and whose
    // node does not forward it computes the plain Conv.
    for (size_t i = 0; i < order.size(); ++i) {
      const Node& node = graph.node(order[i]);
      if (!out.nodes[i] || !out.nodes[i]->fused()) continue;
      const Node* post = post_op_node(graph, node);  // null unless `node` is a Conv
      if (!post) continue;
      if (const OpRecord* record = find_op(*post, graph.opset); record && record->idempotent) continue;
      const size_t j = position_of(post);
      if (j < order.size() && out.nodes[j] && out.nodes[j]->forwarded_input() >= 0) continue;
      no_fusion[i] = 1;
      dirty[i] = 1;
      again = true;
    }
  }
  for (uint8_t cl : out.channels_last) out.channels_last_values += cl;
  return out;
}

}  // namespace memledger::exec::fast
