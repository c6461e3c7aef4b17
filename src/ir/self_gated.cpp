#include "memledger/ir/self_gated.h"

#include <fmt/format.h>

#include "memledger/ir/affine.h"
#include "memledger/ir/op_table.h"

namespace memledger {
namespace {

bool known_gate(std::string_view op) { return op == "Sigmoid" || op == "HardSigmoid"; }

}  // namespace

bool is_self_gated(const Node& node) { return node.domain == kMemledgerDomain && node.op == kSelfGatedOp; }

bool is_self_gate(const Node& gate) {
  const OpRecord* record = find_op(gate);
  return record && record->domain.empty() && known_gate(record->name);
}

std::optional<SelfGatedPair> match_self_gated(const Graph& g, const Node& mul, GateTypes types) {
  auto typed = [types](const Value& v) {
    if (types == GateTypes::kFloat32) return v.dtype == DType::kFloat32;
    return (v.dtype == DType::kInt8 || v.dtype == DType::kUInt8) && v.quant.has_value();
  };
  const OpRecord* record = find_op(mul);
  if (!record || !record->is("", "Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const ValueId s = mul.inputs[static_cast<size_t>(side)], x = mul.inputs[static_cast<size_t>(1 - side)];
    if (!s.valid() || !x.valid() || s == x) continue;
    const NodeId producer = g.value(s).producer;
    if (!producer.valid()) continue;
    const Node& gate = g.node(producer);
    if (!is_self_gate(gate) || gate.inputs.size() != 1 || gate.inputs[0] != x || gate.outputs.size() != 1) continue;
    const Value& xv = g.value(x);
    const Value& y = g.value(mul.outputs[0]);
    if (!typed(xv) || !typed(g.value(s)) || !typed(y) || g.value(s).shape != xv.shape || y.shape != xv.shape) continue;
    if (g.is_graph_output(s) || g.consumers(s).size() != 1) continue;
    return SelfGatedPair{.gate = producer, .x = 1 - side};
  }
  return std::nullopt;
}

Node self_gated_node(ValueId x, const Node& gate, ValueId y, const std::string& name) {
  Node node{.name = name,
            .op = std::string(kSelfGatedOp),
            .domain = std::string(kMemledgerDomain),
            .inputs = {x},
            .outputs = {y},
            .attributes = gate.attributes};
  node.attributes["gate"] = gate.op;
  return node;
}

std::string check_self_gated(const Graph& g, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1 || !node.inputs[0].valid())
    return "expects one input and one output";
  const std::string gate = node.string_attr("gate", "");
  if (!known_gate(gate)) return fmt::format("attribute 'gate' is '{}', not Sigmoid or HardSigmoid", gate);
  const Value& x = g.value(node.inputs[0]);
  const Value& y = g.value(node.outputs[0]);
  if (x.dtype != DType::kFloat32 || y.dtype != x.dtype || y.shape != x.shape)
    return fmt::format("input {} {} and output {} {} are not one float32 type", dtype_name(x.dtype),
                       shape_to_string(x.shape), dtype_name(y.dtype), shape_to_string(y.shape));
  return {};
}

}  // namespace memledger
