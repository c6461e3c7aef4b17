#include "memledger/ir/write_patch.h"

#include <fmt/format.h>

#include "memledger/ir/affine.h"

namespace memledger {

bool is_write_patch(const Node& node) { return node.domain == kMemledgerDomain && node.op == kWritePatchOp; }

std::string check_write_patch(const Graph& g, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1 || !node.inputs[1].valid())
    return "expects (accumulator?, patch) and one output";
  const Value& y = g.value(node.outputs[0]);
  const Value& patch = g.value(node.inputs[1]);
  const Shape shape = node.ints_attr("shape");
  const std::vector<int64_t> starts = node.ints_attr("starts");
  if (shape != y.shape)
    return fmt::format("attribute 'shape' {} is not the output's {}", shape_to_string(shape), shape_to_string(y.shape));
  if (node.inputs[0].valid()) {
    const Value& x = g.value(node.inputs[0]);
    if (x.shape != y.shape || x.dtype != y.dtype)
      return fmt::format("input 0 {} {} is not of the output's type", dtype_name(x.dtype), shape_to_string(x.shape));
  }
  if (patch.dtype != y.dtype || patch.shape.size() != y.shape.size() || starts.size() != y.shape.size())
    return fmt::format("patch {} {} and starts of {} values for output {} {}", dtype_name(patch.dtype),
                       shape_to_string(patch.shape), starts.size(), dtype_name(y.dtype), shape_to_string(y.shape));
  for (size_t a = 0; a < starts.size(); ++a)
    if (starts[a] < 0 || starts[a] + patch.shape[a] > y.shape[a])
      return fmt::format("patch {} at starts[{}] = {} leaves the output {}", shape_to_string(patch.shape), a, starts[a],
                         shape_to_string(y.shape));
  return {};
}

Node write_patch_node(ValueId accumulator, ValueId patch, const std::vector<int64_t>& starts, const Shape& shape,
                      ValueId y, const std::string& name) {
  return {.name = name,
          .op = std::string(kWritePatchOp),
          .domain = std::string(kMemledgerDomain),
          .inputs = {accumulator, patch},
          .outputs = {y},
          .attributes = {{"starts", starts}, {"shape", shape}}};
}

}  // namespace memledger
