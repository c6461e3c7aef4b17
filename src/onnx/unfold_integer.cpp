#include "onnx/unfold_integer.h"

#include <algorithm>
#include <unordered_map>

#include "memledger/core/error.h"
#include "memledger/ir/op_table.h"

namespace memledger::onnx_io {
namespace {

class Unfolder {
 public:
  explicit Unfolder(Graph& g) : g_(g) {}

  void run() {
    const std::vector<NodeId> order = g_.order();
    for (NodeId n : order) {
      const Node& node = g_.node(n);
      const OpRecord* record = find_op(node, g_.opset);
      if (!record || record->integer.form != IntegerForm::kRequantizes || node.outputs.size() != 1) continue;
      const Value& out = g_.value(node.outputs[0]);
      if (out.quant)
        to_qdq(n, record->integer);
      else if (out.dtype == DType::kInt32 && quantized_input(node))
        to_zero_points(n);
    }
  }

 private:
  bool quantized_input(const Node& node) const {
    return !node.inputs.empty() && node.inputs[0].valid() && g_.value(node.inputs[0]).quant.has_value();
  }

  // Constants holding a value's parameters: the scale (float32) and the zero point (of the
  // value's type), scalars for one pair, 1-D along the axis otherwise.
  ValueId scale_of(const Value& v) {
    const Quantization& q = *v.quant;
    Tensor t(DType::kFloat32, q.per_axis() ? Shape{static_cast<int64_t>(q.scales.size())} : Shape{});
    for (int64_t i = 0; i < t.elements(); ++i) t.set_element_from_double(i, q.scales[static_cast<size_t>(i)]);
    const int64_t rank = static_cast<int64_t>(t.shape().size());
    return g_.add_constant(g_.unique_name(v.name + "_scale"), std::move(t), AxisRoles(static_cast<size_t>(rank)));
  }
  ValueId zero_point_of(const Value& v) {
    const Quantization& q = *v.quant;
    Tensor t(v.dtype, q.per_axis() ? Shape{static_cast<int64_t>(q.zero_points.size())} : Shape{});
    for (int64_t i = 0; i < t.elements(); ++i)
      t.set_element_from_double(i, static_cast<double>(q.zero_points[static_cast<size_t>(i)]));
    const int64_t rank = static_cast<int64_t>(t.shape().size());
    return g_.add_constant(g_.unique_name(v.name + "_zero_point"), std::move(t), AxisRoles(static_cast<size_t>(rank)));
  }

  // The float value of integer value `v`, from one DequantizeLinear placed before `user`
  // (shared by later readers).
  ValueId dequantized(ValueId v, NodeId user) {
    if (const auto it = dequantized_.find(v.index); it != dequantized_.end()) return it->second;
    const Value value = g_.value(v);
    Node dq{.name = g_.unique_name(value.name + "_dequantize"), .op = "DequantizeLinear"};
    dq.inputs = {v, scale_of(value), zero_point_of(value)};
    if (value.quant->per_axis()) dq.attributes["axis"] = static_cast<int64_t>(value.quant->axis);
    const ValueId f = g_.add_value({.name = g_.unique_name(value.name + "_float"),
                                    .dtype = DType::kFloat32,
                                    .shape = value.shape,
                                    .roles = value.roles});
    dq.outputs = {f};
    g_.insert_node_before(user, std::move(dq));
    dequantized_[v.index] = f;
    return f;
  }

  // DequantizeLinear on each quantized input, the op in float, QuantizeLinear to the output.
  void to_qdq(NodeId n, const IntegerRule& rule) {
    std::vector<ValueId> inputs = g_.node(n).inputs;
    const size_t quantized =
        rule.quantized_inputs < 0 ? inputs.size() : std::min(inputs.size(), static_cast<size_t>(rule.quantized_inputs));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const bool data = i < quantized || static_cast<int>(i) == rule.bias_input;
      if (data && inputs[i].valid() && g_.value(inputs[i]).quant) inputs[i] = dequantized(inputs[i], n);
    }
    g_.set_inputs(n, inputs);
    const ValueId integer = g_.node(n).outputs[0];
    const Value out = g_.value(integer);
    const ValueId f = g_.add_value({.name = g_.unique_name(out.name + "_float"),
                                    .dtype = DType::kFloat32,
                                    .shape = out.shape,
                                    .roles = out.roles});
    g_.set_output(n, 0, f);
    Node q{.name = g_.unique_name(out.name + "_quantize"), .op = "QuantizeLinear"};
    q.inputs = {f, scale_of(out), zero_point_of(out)};
    q.outputs = {integer};
    // Right after the node: before the node that follows it, or last.
    const std::vector<NodeId>& order = g_.order();
    const auto at = std::find(order.begin(), order.end(), n);
    if (at + 1 == order.end())
      g_.add_node(std::move(q));
    else
      g_.insert_node_before(*(at + 1), std::move(q));
  }

  // Conv / MatMul with an int32 accumulator as output: ConvInteger / MatMulInteger.
  void to_zero_points(NodeId n) {
    const Node& node = g_.node(n);
    const OpRecord* written = nullptr;
    for (const OpRecord& r : op_table())
      if (r.qlinear.operands == QLinearOperands::kZeroPoints && r.qlinear.of == node.op && node.domain.empty())
        written = &r;
    if (!written) fail("export: node {} computes an int32 accumulator, which ONNX cannot state", node.label());
    std::vector<ValueId> inputs(
        node.inputs.begin(),
        node.inputs.begin() +
            std::min<std::ptrdiff_t>(written->qlinear.data_inputs, static_cast<std::ptrdiff_t>(node.inputs.size())));
    const size_t data = inputs.size();
    for (size_t i = 0; i < data; ++i) {
      const Value v = g_.value(inputs[i]);  // a copy: adding the constant moves the values
      if (!v.quant) fail("export: node {}: input '{}' has no zero point", node.label(), v.name);
      inputs.push_back(zero_point_of(v));
    }
    g_.set_inputs(n, inputs);
    g_.set_op(n, std::string(written->name));
  }

  Graph& g_;
  std::unordered_map<int32_t, ValueId> dequantized_;
};

}  // namespace

void unfold_integer_operators(Graph& graph) { Unfolder(graph).run(); }

}  // namespace memledger::onnx_io
