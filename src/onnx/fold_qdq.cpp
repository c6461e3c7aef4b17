#include "onnx/fold_qdq.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/ir/op_table.h"
#include "onnx/quant_params.h"

namespace memledger::onnx_io {
namespace {

bool is_op(const Node& n, const char* op) { return n.domain.empty() && n.op == op; }

// Where a live value comes from a DequantizeLinear whose parameters were constant: that node.
struct Dequantized {
  NodeId node;
  ValueId integer;  // its integer input
  const Quantization* quant = nullptr;
};

class Folder {
 public:
  explicit Folder(Graph& g) : g_(g) {}

  QdqFold run() {
    read_parameters();
    const std::vector<NodeId> order = g_.order();
    for (NodeId n : order)
      if (g_.is_live(n)) fold(n);
    return stats_;
  }

 private:
  // Every QuantizeLinear and DequantizeLinear with constant parameters: checked, and its
  // integer value quantized (a QuantizeLinear's output; a DequantizeLinear's input unless
  // it already has parameters, which must then be the same for the node to fold).
  void read_parameters() {
    for (NodeId n : g_.order()) {
      const Node& node = g_.node(n);
      const bool quantize = is_op(node, "QuantizeLinear");
      if (!quantize && !is_op(node, "DequantizeLinear")) continue;
      if (node.inputs.empty() || node.outputs.empty()) continue;
      const ValueId integer = quantize ? node.outputs[0] : node.inputs[0];
      auto q = constant_quantization(g_, node, integer, 1, 2, node.int_attr("axis", 1));
      if (!q) continue;
      Value& v = g_.value(integer);
      if (!v.quant) v.quant = *q;
      if (!quantize) dequantize_[n.index] = std::move(*q);
    }
  }

  std::optional<Dequantized> dequantized(ValueId v) const {
    if (!v.valid()) return std::nullopt;
    const NodeId p = g_.value(v).producer;
    if (!p.valid() || !g_.is_live(p) || !is_op(g_.node(p), "DequantizeLinear")) return std::nullopt;
    const auto it = dequantize_.find(p.index);
    if (it == dequantize_.end()) return std::nullopt;
    const ValueId integer = g_.node(p).inputs[0];
    // A value has one quantization: a DequantizeLinear that reads it otherwise rescales.
    if (g_.value(integer).quant != it->second) return std::nullopt;
    return Dequantized{p, integer, &it->second};
  }

  void fold(NodeId n) {
    const Node& node = g_.node(n);
    const OpRecord* record = find_op(node, g_.opset);
    if (!record || record->integer.form == IntegerForm::kNone) return;
    const IntegerRule& rule = record->integer;
    if (node.outputs.size() != 1 || g_.is_graph_output(node.outputs[0])) return;

    // The inputs: the integers behind the DequantizeLinears.
    std::vector<ValueId> inputs = node.inputs;
    std::vector<NodeId> dequantizers;
    const size_t quantized = rule.quantized_inputs < 0
                                 ? node.inputs.size()
                                 : std::min(node.inputs.size(), static_cast<size_t>(rule.quantized_inputs));
    for (size_t i = 0; i < quantized; ++i) {
      const auto d = dequantized(node.inputs[i]);
      if (!d) return;
      if (d->quant->per_axis() && static_cast<int>(i) != rule.weight_input) return;
      inputs[i] = d->integer;
      dequantizers.push_back(d->node);
    }
    if (quantized == 0) return;
    const size_t bias = static_cast<size_t>(rule.bias_input);
    const bool has_bias = rule.bias_input >= 0 && bias < node.inputs.size() && node.inputs[bias].valid();
    if (has_bias) {
      const auto d = dequantized(node.inputs[bias]);
      if (!d || g_.value(d->integer).dtype != DType::kInt32 || !bias_in_accumulator_units(inputs, *d->quant)) return;
      inputs[bias] = d->integer;
      dequantizers.push_back(d->node);
    }

    // The output: read only by QuantizeLinear nodes of one set of constant parameters.
    const std::vector<NodeId> readers = g_.consumers(node.outputs[0]);
    if (readers.empty()) return;
    std::vector<ValueId> integer_outputs;
    for (NodeId r : readers) {
      const Node& q = g_.node(r);
      if (!is_op(q, "QuantizeLinear") || q.inputs[0] != node.outputs[0] || q.outputs.empty()) return;
      const Value& out = g_.value(q.outputs[0]);
      if (!out.quant) return;
      if (!integer_outputs.empty()) {
        const Value& first = g_.value(integer_outputs[0]);
        if (out.quant != first.quant || out.dtype != first.dtype || g_.is_graph_output(q.outputs[0])) return;
      }
      integer_outputs.push_back(q.outputs[0]);
    }
    const Value& out = g_.value(integer_outputs[0]);
    if (out.quant->per_axis()) return;
    // Data operands are of the output's integer type (weights and bias may differ: u8 × s8).
    for (size_t i = 0; i < quantized; ++i)
      if (static_cast<int>(i) != rule.weight_input && g_.value(inputs[i]).dtype != out.dtype) return;
    if (rule.form == IntegerForm::kSameQuant && g_.value(inputs[0]).quant != out.quant) return;

    // Rewrite: the node over the integers, writing the first QuantizeLinear's output.
    if (rule.weight_input >= 0)
      check_accumulator(g_, node, inputs[0], inputs[static_cast<size_t>(rule.weight_input)],
                        has_bias ? inputs[bias] : ValueId{}, weight_channel_axis(g_, node, rule));
    g_.set_inputs(n, inputs);
    for (size_t i = 1; i < readers.size(); ++i) {
      g_.replace_all_uses(integer_outputs[i], integer_outputs[0]);
      g_.erase_node(readers[i]);
    }
    g_.erase_node(readers[0]);
    g_.set_output(n, 0, integer_outputs[0]);
    stats_.removed_quantize += static_cast<int>(readers.size());
    ++stats_.folded;
    for (NodeId d : dequantizers) {
      if (!g_.is_live(d)) continue;
      const ValueId dv = g_.node(d).outputs[0];
      if (g_.consumers(dv).empty() && !g_.is_graph_output(dv)) {
        g_.erase_node(d);
        ++stats_.removed_dequantize;
      }
    }
  }

  // An int32 bias adds to the accumulator as it is only when its scale is s_x · s_w (per
  // output channel) and its zero point 0, as onnxruntime's quantizer writes it.
  bool bias_in_accumulator_units(const std::vector<ValueId>& inputs, const Quantization& b) const {
    const Quantization& x = *g_.value(inputs[0]).quant;
    const Quantization& w = *g_.value(inputs[1]).quant;
    const size_t channels = std::max(w.scales.size(), b.scales.size());
    if (w.scales.size() != 1 && b.scales.size() != 1 && w.scales.size() != b.scales.size()) return false;
    for (size_t c = 0; c < channels; ++c) {
      const double expected = static_cast<double>(x.scale()) * w.scale(static_cast<int64_t>(c));
      const double got = b.scale(static_cast<int64_t>(c));
      if (std::abs(got - expected) > 1e-4 * expected || b.zero_point(static_cast<int64_t>(c)) != 0) return false;
    }
    return true;
  }

  Graph& g_;
  std::unordered_map<int32_t, Quantization> dequantize_;  // by DequantizeLinear node index
  QdqFold stats_;
};

}  // namespace

QdqFold fold_qdq(Graph& graph) { return Folder(graph).run(); }

}  // namespace memledger::onnx_io
