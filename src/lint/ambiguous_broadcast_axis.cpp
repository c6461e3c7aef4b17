#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "memledger/ir/op_table.h"
#include "memledger/lint/lint.h"

namespace memledger {
namespace {

// "axis 3 (W)" or "axis 3" when no operator stated its role.
std::string axis_name(const Value& v, size_t axis) {
  const AxisRole role = axis < v.roles.size() ? v.roles[axis] : AxisRole::kOther;
  if (role == AxisRole::kOther) return fmt::format("axis {}", axis);
  return fmt::format("axis {} ({})", axis, static_cast<char>(role));
}

std::string purpose(const Value& v, size_t axis) {
  switch (axis < v.roles.size() ? v.roles[axis] : AxisRole::kOther) {
    case AxisRole::kC:
      return "the channel axis";
    case AxisRole::kH:
      return "the height axis";
    case AxisRole::kW:
      return "the width axis";
    case AxisRole::kN:
      return "the batch axis";
    default:
      return fmt::format("axis {}", axis);
  }
}

std::string unit_shape_with(size_t rank, size_t axis, int64_t length) {
  Shape s(rank, 1);
  s[axis] = length;
  return shape_to_string(s);
}

}  // namespace

std::vector<Diagnostic> lint_ambiguous_broadcast_axis(const Graph& g) {
  std::vector<Diagnostic> found;
  for (NodeId id : g.order()) {
    const Node& node = g.node(id);
    if (!broadcasts(node) || node.outputs.empty()) continue;
    const Value& out = g.value(node.outputs[0]);
    // The tensor: an operand of the output's shape that is not itself a constant.
    const Value* tensor = nullptr;
    for (ValueId in : node.inputs)
      if (in.valid() && !g.value(in).is_constant() && g.value(in).shape == out.shape) tensor = &g.value(in);
    if (!tensor) continue;
    const size_t rank = tensor->shape.size();
    for (ValueId in : node.inputs) {
      if (!in.valid() || !g.value(in).is_constant()) continue;
      const Value& param = g.value(in);
      // Only [1,...,1,L] with fewer axes than the tensor: its axis is chosen by the
      // right alignment alone, not by the author.
      if (param.shape.empty() || param.shape.size() >= rank) continue;
      const int64_t length = param.shape.back();
      if (length <= 1) continue;
      bool vector_like = true;
      for (size_t a = 0; a + 1 < param.shape.size(); ++a) vector_like = vector_like && param.shape[a] == 1;
      if (!vector_like) continue;
      const size_t used = rank - 1;
      std::vector<size_t> also;
      for (size_t a = 0; a < used; ++a)
        if (tensor->shape[a] == length) also.push_back(a);
      if (also.empty()) continue;

      std::vector<std::string> alternatives, reshapes;
      for (size_t a : also) {
        alternatives.push_back(axis_name(*tensor, a));
        reshapes.push_back(
            fmt::format("reshape it to {} for {}", unit_shape_with(rank, a, length), purpose(*tensor, a)));
      }
      const std::string roles =
          std::all_of(tensor->roles.begin(), tensor->roles.end(), [](AxisRole r) { return r == AxisRole::kOther; })
              ? ""
              : " " + roles_to_string(tensor->roles);
      found.push_back(
          {.code = "ambiguous-broadcast-axis",
           .node = node.label(),
           .message = fmt::format(
               "node {}: parameter '{}' {} broadcasts against '{}' {}{} along its last axis, {}, because ONNX "
               "broadcasting aligns shapes on the right; its length {} also matches {}. To state the intent, {}; "
               "to keep {}, reshape it to {}.",
               node.label(), param.name, shape_to_string(param.shape), tensor->name, shape_to_string(tensor->shape),
               roles, axis_name(*tensor, used), length, fmt::join(alternatives, " and "), fmt::join(reshapes, ", or "),
               purpose(*tensor, used), unit_shape_with(rank, used, length))});
    }
  }
  return found;
}

}  // namespace memledger
