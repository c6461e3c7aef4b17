#include "memledger/ir/axis_roles.h"

#include <set>
#include <string>

#include "memledger/ir/affine.h"

namespace memledger {
namespace {

using R = AxisRole;

// Operators whose first input and first output are activations in N,C,spatial order.
bool is_channel_first_op(const Node& n) {
  static const std::set<std::string> ops{"Conv",
                                         "ConvTranspose",
                                         "ConvInteger",
                                         "QLinearConv",
                                         "MaxPool",
                                         "AveragePool",
                                         "LpPool",
                                         "GlobalAveragePool",
                                         "GlobalMaxPool",
                                         "GlobalLpPool",
                                         "MaxUnpool",
                                         "BatchNormalization",
                                         "InstanceNormalization",
                                         "LRN",
                                         "MeanVarianceNormalization",
                                         "DepthToSpace",
                                         "SpaceToDepth",
                                         "MaxRoiPool",
                                         "RoiAlign",
                                         "DeformConv"};
  return n.domain.empty() && ops.count(n.op) != 0;
}

// Operators whose output axis i is the same axis as input axis i of every operand of the
// output's rank (operands of lower rank align on the right, as ONNX broadcasting does).
// Extents may change (Pad, Slice, Resize, Concat) but what each axis means does not.
bool keeps_axes(const Node& n) {
  static const std::set<std::string> ops{
      // elementwise, unary
      "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Cos",
      "Cosh", "Dropout", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN",
      "LeakyRelu", "Log", "Mish", "Neg", "Not", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign",
      "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu",
      // elementwise, broadcasting
      "Add", "And", "BitShift", "Div", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Mean",
      "Min", "Mod", "Mul", "Or", "Pow", "PRelu", "Sub", "Sum", "Where", "Xor",
      // quantization (the data operand; scales broadcast or are per-axis)
      "QuantizeLinear", "DequantizeLinear",
      // axis-preserving with changing extents or along one axis
      "Concat", "Expand", "LogSoftmax", "Softmax", "Hardmax", "LayerNormalization", "Pad", "Resize", "Slice", "Split",
      "Tile", "Upsample", "CumSum", "ReverseSequence", "TopK"};
  return (n.domain.empty() && ops.count(n.op) != 0) || is_affine(n);
}

bool is_reduction(const Node& n) {
  return n.domain.empty() && (n.op.rfind("Reduce", 0) == 0 || n.op == "ArgMax" || n.op == "ArgMin");
}

AxisRoles channel_first_roles(size_t rank) {
  switch (rank) {
    case 3:
      return {R::kN, R::kC, R::kW};
    case 4:
      return {R::kN, R::kC, R::kH, R::kW};
    case 5:
      return {R::kN, R::kC, R::kOther, R::kH, R::kW};
    default:
      return unknown_roles(rank);
  }
}

class Propagator {
 public:
  explicit Propagator(Graph& g) : g_(g) {}
  bool changed = false;

  // Fills unknown roles of `v` from `roles` (same rank).
  void state(ValueId v, const AxisRoles& roles) {
    if (!v.valid()) return;
    Value& value = g_.value(v);
    if (value.roles.size() != roles.size()) return;
    for (size_t a = 0; a < roles.size(); ++a) set(value, a, roles[a]);
  }
  void set(Value& value, size_t axis, AxisRole role) {
    if (role == R::kOther || value.roles[axis] != R::kOther) return;
    value.roles[axis] = role;
    changed = true;
  }
  // Roles between an operand and the output, right-aligned. The output tells every operand
  // (that is how a broadcast parameter gets its roles); only an operand of the output's
  // own shape tells the output.
  void align(ValueId operand, ValueId output) {
    if (!operand.valid() || !output.valid() || operand == output) return;
    Value& in = g_.value(operand);
    Value& out = g_.value(output);
    if (in.shape.size() > out.shape.size()) return;
    const size_t shift = out.shape.size() - in.shape.size();
    for (size_t a = 0; a < in.shape.size(); ++a) set(in, a, out.roles[a + shift]);
    if (in.shape == out.shape)
      for (size_t a = 0; a < in.shape.size(); ++a) set(out, a, in.roles[a]);
  }
  // Same axes except along `axis` (Concat, Split, Softmax ...): same rank, any extents.
  void same_axes(ValueId a, ValueId b) {
    if (!a.valid() || !b.valid() || a == b) return;
    Value& x = g_.value(a);
    Value& y = g_.value(b);
    if (x.shape.size() != y.shape.size()) return;
    for (size_t i = 0; i < x.shape.size(); ++i) {
      set(x, i, y.roles[i]);
      set(y, i, x.roles[i]);
    }
  }

  void visit(const Node& n) {
    // Omitted data inputs or outputs state nothing (the checker refuses most of them).
    if (n.outputs.empty() || n.inputs.empty() || !n.inputs[0].valid()) return;
    const ValueId out = n.outputs[0];
    if (is_channel_first_op(n)) {
      state(n.inputs.at(0), channel_first_roles(g_.value(n.inputs[0]).shape.size()));
      state(out, channel_first_roles(g_.value(out).shape.size()));
      per_channel_parameters(n);
      conv_weights(n);
      return;
    }
    if (n.domain.empty() && (n.op == "QuantizeLinear" || n.op == "DequantizeLinear")) per_axis_quantization(n);
    if (keeps_axes(n)) {
      const bool extents_may_differ = n.op == "Concat" || n.op == "Pad" || n.op == "Resize" || n.op == "Slice" ||
                                      n.op == "Tile" || n.op == "Upsample" || n.op == "Split" || n.op == "TopK" ||
                                      n.op == "Expand";
      const size_t data_inputs = data_operand_count(n);
      for (size_t i = 0; i < std::min(data_inputs, n.inputs.size()); ++i)
        for (ValueId o : n.outputs) {
          if (extents_may_differ && n.op != "Expand")
            same_axes(n.inputs[i], o);
          else
            align(n.inputs[i], o);
        }
      return;
    }
    if (n.domain.empty() && n.op == "Transpose") {
      transpose(n);
      return;
    }
    if (is_reduction(n) && n.int_attr("keepdims", 1) == 1) same_axes(n.inputs[0], out);
  }

 private:
  // How many leading inputs are tensors that share the output's axes (the rest are
  // shapes, indices, scales given as separate inputs).
  static size_t data_operand_count(const Node& n) {
    if (n.op == "Pad" || n.op == "Resize" || n.op == "Slice" || n.op == "Tile" || n.op == "Upsample" ||
        n.op == "Split" || n.op == "TopK" || n.op == "Expand" || n.op == "Clip" || n.op == "Dropout" ||
        n.op == "CumSum" || n.op == "ReverseSequence" || n.op == "QuantizeLinear" || n.op == "DequantizeLinear" ||
        n.op == "LayerNormalization")
      return 1;
    if (n.op == "Where") return 3;
    return n.inputs.size();
  }

  // [C] parameters of channel-first operators: Conv bias, BatchNormalization's scale, bias,
  // mean and variance, InstanceNormalization's scale and bias.
  void per_channel_parameters(const Node& n) {
    size_t first = 0;
    if (n.op == "Conv" || n.op == "ConvTranspose") first = 2;
    if (n.op == "BatchNormalization" || n.op == "InstanceNormalization") first = 1;
    if (first == 0) return;
    for (size_t i = first; i < n.inputs.size(); ++i)
      if (n.inputs[i].valid() && g_.value(n.inputs[i]).shape.size() == 1) state(n.inputs[i], {R::kC});
  }

  // Conv weights [M, C/g, k...]: the axis summed over with the input's channels is C, the
  // kernel window's axes are H and W (a profile's NHWC order then stores them M,kH,kW,C/g,
  // as TFLite does). A depthwise Conv (one input channel per group) sums over no channel
  // axis; its channel is the map axis, so NHWC stores it 1,kH,kW,M. ConvTranspose
  // ([C, M/g, k...]) is left without roles.
  void conv_weights(const Node& n) {
    size_t input = 0;
    if (n.op == "Conv" || n.op == "ConvInteger") input = 1;
    if (n.op == "QLinearConv") input = 3;
    if (input == 0 || n.inputs.size() <= input || !n.inputs[input].valid()) return;
    const Value& w = g_.value(n.inputs[input]);
    const size_t rank = w.shape.size();
    if (rank < 3 || rank > 5) return;
    AxisRoles roles = channel_first_roles(rank);
    roles[0] = R::kOther;
    const bool depthwise = w.shape[1] == 1 && n.int_attr("group", 1) > 1;
    if (depthwise) std::swap(roles[0], roles[1]);
    state(n.inputs[input], roles);
  }

  void per_axis_quantization(const Node& n) {
    if (n.inputs.size() < 2 || !n.inputs[1].valid()) return;
    const Value& scale = g_.value(n.inputs[1]);
    if (scale.shape.size() != 1) return;  // per-tensor: no axis is stated
    const Value& x = g_.value(n.inputs[0]);
    int64_t axis = n.int_attr("axis", 1);
    const auto rank = static_cast<int64_t>(x.shape.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return;
    AxisRoles roles = unknown_roles(x.shape.size());
    roles[static_cast<size_t>(axis)] = R::kC;
    state(n.inputs[0], roles);
    state(n.outputs[0], roles);
    for (size_t i = 1; i < n.inputs.size(); ++i) state(n.inputs[i], {R::kC});
  }

  void transpose(const Node& n) {
    Value& in = g_.value(n.inputs[0]);
    Value& out = g_.value(n.outputs[0]);
    const size_t rank = in.shape.size();
    std::vector<int64_t> perm = n.ints_attr("perm");
    if (perm.empty())
      for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
    if (perm.size() != rank || out.shape.size() != rank) return;
    for (size_t i = 0; i < rank; ++i) {
      const auto from = static_cast<size_t>(perm[i]);
      if (from >= rank) return;
      set(out, i, in.roles[from]);
      set(in, from, out.roles[i]);
    }
  }

  Graph& g_;
};

}  // namespace

void infer_axis_roles(Graph& g, const AxisRoleOptions& options) {
  if (options.inputs_nhwc)
    for (ValueId in : g.inputs())
      if (g.value(in).shape.size() == 4) g.value(in).roles = {R::kN, R::kH, R::kW, R::kC};
  // Every round fills at least one role or stops; alternating directions carry roles from
  // a Conv back to the graph input and forward to the output in a few rounds.
  Propagator p(g);
  for (int round = 0; round < 64; ++round) {
    p.changed = false;
    if (round % 2 == 0)
      for (NodeId n : g.order()) p.visit(g.node(n));
    else
      for (auto it = g.order().rbegin(); it != g.order().rend(); ++it) p.visit(g.node(*it));
    if (!p.changed) break;
  }
}

}  // namespace memledger
