#include "memledger/passes/repeat_to_plain_conv.h"

#include <optional>
#include <vector>

#include "memledger/ir/op_names.h"
#include "rewrite.h"

namespace memledger {
namespace {

using passes::int_values;
using passes::producer_of;

// The Unsqueeze axes of `node` (input 1 from opset 13, else the attribute).
std::optional<std::vector<int64_t>> unsqueeze_axes(const Graph& graph, const Node& node) {
  if (node.inputs.size() > 1) return int_values(graph, node.inputs[1]);
  if (node.has_attr("axes")) return node.ints_attr("axes");
  return std::nullopt;
}

// The tensor T when `x` is T repeated `g` times along axis 1 (T's channels = C / g):
// Tile with repeats [1,g,1,...], Concat(axis=1) of one value g times, or
// Reshape(Expand(U)) with U = T with a unit axis inserted at 1 and expanded to g there.
// PyTorch's x.t().repeat(g, 1).unsqueeze(0) is Unsqueeze(axes [0]) of Tile(T', [g,1,...]):
// then T is T' with the batch axis put back, which the caller makes (`unsqueeze` is set to
// the Unsqueeze node to apply to the returned T').
ValueId repeated_source(const Graph& graph, ValueId x, int64_t g, NodeId* unsqueeze) {
  const NodeId p = producer_of(graph, x);
  if (!p.valid()) return {};
  const Node& node = graph.node(p);
  if (!node.domain.empty() || node.inputs.empty()) return {};
  const Shape& xs = graph.value(x).shape;
  if (xs.size() < 3 || xs[1] % g != 0) return {};
  const int64_t c = xs[1] / g;
  const auto matches = [&](ValueId t) {
    Shape expect = xs;
    expect[1] = c;
    return graph.value(t).shape == expect;
  };

  if (node.op == op::kTile) {
    const auto repeats = int_values(graph, node.inputs[1]);
    if (!repeats || repeats->size() != xs.size()) return {};
    for (size_t d = 0; d < xs.size(); ++d)
      if ((*repeats)[d] != (d == 1 ? g : 1)) return {};
    return matches(node.inputs[0]) ? node.inputs[0] : ValueId{};
  }
  if (node.op == op::kConcat) {
    int64_t axis = node.int_attr("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(xs.size());
    if (axis != 1 || static_cast<int64_t>(node.inputs.size()) != g) return {};
    for (ValueId in : node.inputs)
      if (in != node.inputs[0]) return {};
    return matches(node.inputs[0]) ? node.inputs[0] : ValueId{};
  }
  if (node.op == op::kUnsqueeze && xs[0] == 1) {
    const auto axes = unsqueeze_axes(graph, node);
    if (!axes || axes->size() != 1 || (*axes)[0] != 0) return {};
    const NodeId t = producer_of(graph, node.inputs[0]);
    if (!t.valid() || graph.node(t).op != op::kTile || !graph.node(t).domain.empty()) return {};
    const Node& tile = graph.node(t);
    const auto repeats = int_values(graph, tile.inputs[1]);
    if (!repeats || repeats->size() + 1 != xs.size()) return {};
    for (size_t d = 0; d < repeats->size(); ++d)
      if ((*repeats)[d] != (d == 0 ? g : 1)) return {};
    Shape expect(xs.begin() + 1, xs.end());
    expect[0] = c;
    ValueId source = tile.inputs[0];
    if (graph.value(source).shape != expect) return {};
    // The exporter's repeat expands to the input's own shape first ([1,1]): a no-op.
    for (NodeId e = producer_of(graph, source);
         e.valid() && graph.node(e).op == op::kExpand && graph.value(graph.node(e).inputs[0]).shape == expect;
         e = producer_of(graph, source))
      source = graph.node(e).inputs[0];
    *unsqueeze = p;
    return source;
  }
  if (node.op == op::kReshape) {
    // x [N, g·c, rest] = Reshape(E [N, g, c, rest]); E = Expand(U [N, 1, c, rest]).
    const NodeId e = producer_of(graph, node.inputs[0]);
    if (!e.valid() || graph.node(e).op != op::kExpand) return {};
    const ValueId u = graph.node(e).inputs[0];
    const Shape& es = graph.value(node.inputs[0]).shape;
    const Shape& us = graph.value(u).shape;
    Shape want_e = xs;
    want_e[1] = c;
    want_e.insert(want_e.begin() + 1, g);
    Shape want_u = want_e;
    want_u[1] = 1;
    if (es != want_e || us != want_u) return {};
    const NodeId up = producer_of(graph, u);
    if (!up.valid()) return {};
    const Node& unsq = graph.node(up);
    if (unsq.op != op::kUnsqueeze && unsq.op != op::kReshape) return {};
    return matches(unsq.inputs[0]) ? unsq.inputs[0] : ValueId{};
  }
  return {};
}

}  // namespace

PassResult repeat_to_plain_conv(Graph& graph, const PassOptions&) {
  PassResult result;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order) {
    const Node& conv = graph.node(id);
    if (conv.op != op::kConv || !conv.domain.empty()) continue;
    const int64_t g = conv.int_attr("group", 1);
    if (g <= 1) continue;
    NodeId unsqueeze;
    ValueId source = repeated_source(graph, conv.inputs[0], g, &unsqueeze);
    if (!source.valid()) continue;
    const ValueId repeated = conv.inputs[0];
    if (unsqueeze.valid()) {
      // T' [C/g, ...] gets its batch axis back: the same Unsqueeze, on the unrepeated tensor.
      Node u = graph.node(unsqueeze);
      u.name += "_source";
      u.inputs[0] = source;
      Shape shape = graph.value(source).shape;
      shape.insert(shape.begin(), 1);
      const Value& r = graph.value(repeated);
      const ValueId out = graph.add_value(
          {.name = graph.unique_name(graph.value(source).name + "_unsqueezed"), .dtype = r.dtype, .shape = shape});
      u.outputs = {out};
      graph.insert_node_before(id, std::move(u));
      source = out;
    }
    // Each group sees exactly the source, so its weights [M/g, C/g, k] apply to it as they
    // are: together they are the weights [M, C/g, k] of one ungrouped Conv.
    graph.set_input(id, 0, source);
    graph.attributes(id)["group"] = int64_t{1};
    ++result.nodes_rewritten;
    // The repeat and what fed only it go.
    NodeId p = producer_of(graph, repeated);
    while (p.valid() && passes::erase_if_unused(graph, p)) {
      const ValueId in = graph.node(p).inputs[0];
      p = producer_of(graph, in);
    }
  }
  return result;
}

}  // namespace memledger
