#include "memledger/ir/affine.h"

#include <vector>

#include "memledger/core/error.h"

namespace memledger {

std::string_view to_string(AffineRule rule) { return rule == AffineRule::kHistorical ? "historical" : "current"; }

bool is_affine(const Node& node) { return node.domain == kMemledgerDomain && node.op == kAffineOp; }

AffineRule affine_rule(const Node& node) {
  const std::string rule = node.string_attr("rule", "current");
  if (rule == "current") return AffineRule::kCurrent;
  if (rule == "historical") return AffineRule::kHistorical;
  fail("node {}: attribute 'rule' is '{}', expected 'current' or 'historical'", node.label(), rule);
}

ValueId add_affine(Graph& graph, ValueId x, ValueId scale, ValueId bias, AffineRule rule, const std::string& name) {
  const Value& input = graph.value(x);
  for (ValueId parameter : {scale, bias}) {
    const Shape joint = broadcast_shapes(input.shape, graph.value(parameter).shape, "affine '" + name + "'");
    if (joint != input.shape)
      fail("affine '{}': parameter '{}' {} would grow the input {}", name, graph.value(parameter).name,
           shape_to_string(graph.value(parameter).shape), shape_to_string(input.shape));
  }
  Value output{.name = graph.unique_name(name), .dtype = input.dtype, .shape = input.shape, .roles = input.roles};
  const ValueId y = graph.add_value(std::move(output));
  graph.add_node({.name = name,
                  .op = std::string(kAffineOp),
                  .domain = std::string(kMemledgerDomain),
                  .inputs = {x, scale, bias},
                  .outputs = {y},
                  .attributes = {{"rule", std::string(to_string(rule))}}});
  return y;
}

int lower_affine(Graph& graph) {
  int lowered = 0;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order) {
    if (!is_affine(graph.node(id))) continue;
    const Node affine = graph.node(id);
    ML_CHECK(affine.inputs.size() == 3 && affine.outputs.size() == 1, "Affine {} with {} inputs", affine.label(),
             affine.inputs.size());
    Value scaled = graph.value(affine.outputs[0]);
    scaled.name = graph.unique_name(scaled.name + "_scaled");
    scaled.constant.reset();
    const ValueId m = graph.add_value(std::move(scaled));
    const auto part = [&](const char* suffix) { return affine.name.empty() ? "" : affine.name + suffix; };
    graph.insert_node_before(
        id, {.name = part("_mul"), .op = "Mul", .inputs = {affine.inputs[0], affine.inputs[1]}, .outputs = {m}});
    graph.insert_node_before(
        id, {.name = part("_add"), .op = "Add", .inputs = {m, affine.inputs[2]}, .outputs = affine.outputs});
    graph.erase_node(id);
    ++lowered;
  }
  return lowered;
}

}  // namespace memledger
