#include "memledger/ir/axis_roles.h"

#include <algorithm>
#include <string>

#include "memledger/ir/op_table.h"

namespace memledger {
namespace {

using R = AxisRole;
using R2 = RoleRule;

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
    const OpRecord* record = find_op(n, g_.opset);
    if (!record) return;
    const ValueId out = n.outputs[0];
    const size_t data_inputs =
        record->data_inputs < 0 ? n.inputs.size() : std::min(n.inputs.size(), static_cast<size_t>(record->data_inputs));
    switch (record->roles) {
      case R2::kNone:
        return;
      case R2::kChannelFirst:
        state(n.inputs.at(0), channel_first_roles(g_.value(n.inputs[0]).shape.size()));
        state(out, channel_first_roles(g_.value(out).shape.size()));
        per_channel_parameters(n, *record);
        conv_weights(n, *record);
        return;
      case R2::kQuantize:
        per_axis_quantization(n);
        [[fallthrough]];
      case R2::kElementwise:
      case R2::kBroadcastTo:
        for (size_t i = 0; i < data_inputs; ++i)
          for (ValueId o : n.outputs) align(n.inputs[i], o);
        return;
      case R2::kSameAxes:
        for (size_t i = 0; i < data_inputs; ++i)
          for (ValueId o : n.outputs) same_axes(n.inputs[i], o);
        return;
      case R2::kTranspose:
        transpose(n);
        return;
      case R2::kReduction:
        if (n.int_attr("keepdims", 1) == 1) same_axes(n.inputs[0], out);
        return;
    }
  }

 private:
  // [C] parameters of channel-first operators: Conv bias, BatchNormalization's scale, bias,
  // mean and variance, InstanceNormalization's scale and bias.
  void per_channel_parameters(const Node& n, const OpRecord& record) {
    if (record.channel_parameters_from < 0) return;
    for (size_t i = static_cast<size_t>(record.channel_parameters_from); i < n.inputs.size(); ++i)
      if (n.inputs[i].valid() && g_.value(n.inputs[i]).shape.size() == 1) state(n.inputs[i], {R::kC});
  }

  // Conv weights [M, C/g, k...]: the axis summed over with the input's channels is C, the
  // kernel window's axes are H and W (a profile's NHWC order then stores them M,kH,kW,C/g,
  // as TFLite does). A depthwise Conv (one input channel per group) sums over no channel
  // axis; its channel is the map axis, so NHWC stores it 1,kH,kW,M. ConvTranspose
  // ([C, M/g, k...]) is left without roles.
  void conv_weights(const Node& n, const OpRecord& record) {
    if (record.weight_input < 0 || record.weights_transposed) return;
    const auto input = static_cast<size_t>(record.weight_input);
    if (n.inputs.size() <= input || !n.inputs[input].valid()) return;
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
