#include "memledger/exec/kernel_contract.h"

#include <set>
#include <string>

#include "memledger/core/error.h"
#include "memledger/device/tensor_layout.h"
#include "memledger/ir/affine.h"

namespace memledger {
namespace {

const std::set<std::string>& unary_elementwise() {
  static const std::set<std::string> ops{"Relu", "Sigmoid",   "Tanh", "HardSigmoid", "HardSwish", "Clip",       "Sqrt",
                                         "Erf",  "Exp",       "Log",  "Neg",         "Abs",       "Reciprocal", "Floor",
                                         "Ceil", "LeakyRelu", "Elu",  "Softplus",    "Identity",  "Dropout"};
  return ops;
}

const std::set<std::string>& binary_elementwise() {
  static const std::set<std::string> ops{"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  return ops;
}

int64_t bytes_of(const Graph& g, ValueId v, const DeviceProfile& profile) {
  const Value& value = g.value(v);
  return tensor_layout(profile, value.shape, value.dtype, value.roles).bytes();
}

// Inputs that have the output's shape and dtype: an elementwise kernel can write over them.
std::vector<int> same_shaped_inputs(const Graph& g, const Node& node, size_t count) {
  std::vector<int> result;
  const Value& out = g.value(node.outputs.at(0));
  for (size_t i = 0; i < std::min(count, node.inputs.size()); ++i) {
    if (!node.inputs[i].valid()) continue;
    const Value& in = g.value(node.inputs[i]);
    if (in.shape == out.shape && in.dtype == out.dtype) result.push_back(static_cast<int>(i));
  }
  return result;
}

}  // namespace

KernelContract kernel_contract(const Graph& g, NodeId id, const DeviceProfile& profile) {
  const Node& node = g.node(id);
  KernelContract contract;
  if (is_affine(node)) {
    if (affine_rule(node) == AffineRule::kHistorical) {
      contract.workspace_bytes = bytes_of(g, node.outputs.at(0), profile);
    } else {
      contract.overwritable_inputs = same_shaped_inputs(g, node, 1);
    }
    return contract;
  }
  if (!node.domain.empty() && node.domain != "ai.onnx")
    fail("node {}: operator domain '{}' is not supported", node.label(), node.domain);
  if (unary_elementwise().count(node.op)) {
    contract.overwritable_inputs = same_shaped_inputs(g, node, 1);
  } else if (binary_elementwise().count(node.op)) {
    contract.overwritable_inputs = same_shaped_inputs(g, node, 2);
  }
  return contract;
}

}  // namespace memledger
