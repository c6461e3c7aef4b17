#include "onnx/qlinear_ops.h"

#include <cmath>
#include <optional>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/ir/op_table.h"
#include "memledger/ir/quantization_check.h"
#include "onnx/quant_params.h"

namespace memledger::onnx_io {
namespace {

std::optional<ValueId> input(const Node& node, size_t i) {
  if (i >= node.inputs.size() || !node.inputs[i].valid()) return std::nullopt;
  return node.inputs[i];
}

// The parameters each value takes, applied only once every one is known and consistent.
struct Assignment {
  std::vector<std::pair<ValueId, Quantization>> values;

  bool add(const Graph& g, ValueId v, Quantization q) {
    const auto& current = g.value(v).quant;
    if (current && *current != q) return false;  // a value has one quantization
    for (const auto& [other, oq] : values)
      if (other == v && oq != q) return false;
    values.emplace_back(v, std::move(q));
    return true;
  }
  void apply(Graph& g) const {
    for (const auto& [v, q] : values) g.value(v).quant = q;
  }
};

// The axis a 1-D parameter runs along for data input `i` of the integer operator: the
// weight's output channels, else axis 1 of an activation (N, C ...).
int64_t parameter_axis(const Graph& g, const Node& node, const IntegerRule& rule, size_t i, ValueId v) {
  if (static_cast<int>(i) != rule.weight_input) return 1;
  Node as_integer = node;  // weight_channel_axis reads inputs[weight_input] and the attributes
  as_integer.inputs.assign(static_cast<size_t>(rule.weight_input) + 1, v);
  return weight_channel_axis(g, as_integer, rule);
}

// The integer product's accumulator cannot overflow (quant_params.h).
void check_product(const Graph& g, const Node& node, const IntegerRule& rule, const std::vector<ValueId>& inputs,
                   ValueId bias) {
  if (rule.weight_input < 0) return;
  const ValueId w = inputs[static_cast<size_t>(rule.weight_input)];
  check_accumulator(g, node, inputs[0], w, bias,
                    static_cast<int>(parameter_axis(g, node, rule, static_cast<size_t>(rule.weight_input), w)));
}

// QLinearConv / QLinearMatMul: (x, scale, zero point) triples, the output's pair, the rest.
bool read_triples(Graph& g, NodeId n, const QLinearForm& form, const IntegerRule& rule) {
  const Node& node = g.node(n);
  const size_t d = static_cast<size_t>(form.data_inputs);
  if (node.inputs.size() < 3 * d + 2 || node.outputs.size() != 1) return false;
  Assignment a;
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < d; ++i) {
    const auto x = input(node, 3 * i);
    if (!x) return false;
    auto q = constant_quantization(g, node, *x, 3 * i + 1, 3 * i + 2, parameter_axis(g, node, rule, i, *x));
    if (!q || (q->per_axis() && static_cast<int>(i) != rule.weight_input) || !a.add(g, *x, *q)) return false;
    inputs.push_back(*x);
  }
  auto y = constant_quantization(g, node, node.outputs[0], 3 * d, 3 * d + 1, 1);
  if (!y || y->per_axis() || !a.add(g, node.outputs[0], *y)) return false;
  for (size_t i = 3 * d + 2; i < node.inputs.size(); ++i) inputs.push_back(node.inputs[i]);
  // The bias is in the accumulator's units: s_x · s_w per output channel, zero point 0.
  const size_t bias = static_cast<size_t>(rule.bias_input);
  if (rule.bias_input >= 0 && bias < inputs.size() && inputs[bias].valid()) {
    const Quantization& x = a.values[0].second;
    const Quantization& w = a.values[static_cast<size_t>(rule.weight_input)].second;
    Quantization b{
        .scales = {}, .zero_points = std::vector<int64_t>(w.scales.size(), 0), .axis = w.per_axis() ? 0 : -1};
    for (float ws : w.scales) b.scales.push_back(x.scale() * ws);
    const Value& bv = g.value(inputs[bias]);
    check_quantization(b, bv.dtype, bv.shape, "node " + node.label() + ": bias '" + bv.name + "'", "x_scale · w_scale",
                       "zero point");
    if (!a.add(g, inputs[bias], b)) return false;
  }
  a.apply(g);
  check_product(g, node, rule, inputs, rule.bias_input >= 0 && bias < inputs.size() ? inputs[bias] : ValueId{});
  g.set_inputs(n, inputs);
  g.set_op(n, std::string(form.of));
  return true;
}

// ConvInteger / MatMulInteger: the data inputs, then their zero points; scale 1, the
// output the int32 accumulator.
bool read_zero_points(Graph& g, NodeId n, const QLinearForm& form, const IntegerRule& rule) {
  const Node& node = g.node(n);
  const size_t d = static_cast<size_t>(form.data_inputs);
  if (node.inputs.size() < d || node.outputs.size() != 1) return false;
  Assignment a;
  std::vector<ValueId> inputs;
  const std::string where = "node " + node.label();
  for (size_t i = 0; i < d; ++i) {
    const auto x = input(node, i);
    if (!x) return false;
    const Value& xv = g.value(*x);
    Quantization q{.scales = {1.0f}, .zero_points = {0}, .axis = -1};
    if (const auto zp = input(node, d + i)) {
      const Value& z = g.value(*zp);
      if (!z.is_constant()) return false;
      if (z.shape.size() > 1)
        fail("{}: zero point '{}' has rank {}; it is a scalar or 1-D", where, z.name, z.shape.size());
      q.zero_points.clear();
      for (int64_t e = 0; e < z.constant->elements(); ++e)
        q.zero_points.push_back(static_cast<int64_t>(std::llround(z.constant->element_as_double(e))));
      if (q.zero_points.size() > 1) {
        if (static_cast<int>(i) != rule.weight_input) return false;
        q.axis = static_cast<int>(parameter_axis(g, node, rule, i, *x));
        q.scales.assign(q.zero_points.size(), 1.0f);
      } else if (q.zero_points.empty()) {
        fail("{}: zero point '{}' holds no value", where, z.name);
      }
      check_quantization(q, xv.dtype, xv.shape, where + ": value '" + xv.name + "'", "scale (1)",
                         fmt::format("zero point '{}' (input {})", z.name, d + i));
    }
    if (!a.add(g, *x, q)) return false;
    inputs.push_back(*x);
  }
  a.apply(g);
  check_product(g, node, rule, inputs, ValueId{});
  g.set_inputs(n, inputs);
  g.set_op(n, std::string(form.of));
  return true;
}

}  // namespace

int read_qlinear_operators(Graph& g) {
  int read = 0;
  const std::vector<NodeId> order = g.order();
  for (NodeId n : order) {
    const OpRecord* record = find_op(g.node(n), g.opset);
    if (!record || record->qlinear.of.empty()) continue;
    const OpRecord* target = find_op("", record->qlinear.of, g.opset);
    ML_CHECK(target, "op table: {} is the integer form of {}, which has no record", record->name, record->qlinear.of);
    const bool done = record->qlinear.operands == QLinearOperands::kTriples
                          ? read_triples(g, n, record->qlinear, target->integer)
                          : read_zero_points(g, n, record->qlinear, target->integer);
    read += done ? 1 : 0;
  }
  return read;
}

}  // namespace memledger::onnx_io
