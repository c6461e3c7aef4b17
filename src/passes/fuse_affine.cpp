#include "memledger/passes/fuse_affine.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "affine_util.h"
#include "memledger/ir/op_names.h"
#include "rewrite.h"

namespace memledger {
namespace {

using passes::constant_of;

bool plain(const Node& n, std::string_view op) { return n.domain.empty() && n.op == op && n.outputs.size() == 1; }

// Which input of a binary node is the constant; -1 when not exactly one is.
int constant_side(const Graph& graph, const Node& n) {
  if (n.inputs.size() != 2) return -1;
  const bool a = constant_of(graph, n.inputs[0]) != nullptr, b = constant_of(graph, n.inputs[1]) != nullptr;
  return a == b ? -1 : (a ? 0 : 1);
}

// The parameter does not grow x and, as float32, is the operand of an Affine.
bool fits(const Graph& graph, ValueId x, const Tensor& parameter) {
  const Shape& xs = graph.value(x).shape;
  if (parameter.dtype() != DType::kFloat32) return false;
  try {
    return broadcast_shapes(xs, parameter.shape()) == xs;
  } catch (const Error&) {
    return false;
  }
}

// x → Mul(s) → Add(b) with the product used only by the Add.
bool fuse_mul_add(Graph& graph, NodeId mul_id) {
  const Node& mul = graph.node(mul_id);
  if (!plain(mul, op::kMul)) return false;
  const int sc = constant_side(graph, mul);
  if (sc < 0) return false;
  const ValueId x = mul.inputs[static_cast<size_t>(1 - sc)];
  const ValueId product = mul.outputs[0];
  if (graph.value(x).dtype != DType::kFloat32 || graph.is_graph_output(product)) return false;
  const std::vector<NodeId> users = graph.consumers(product);
  if (users.size() != 1 || !plain(graph.node(users[0]), op::kAdd)) return false;
  const NodeId add_id = users[0];
  const Node& add = graph.node(add_id);
  const int bc = constant_side(graph, add);
  if (bc < 0 || add.inputs[static_cast<size_t>(1 - bc)] != product) return false;
  const Tensor scale = *constant_of(graph, mul.inputs[static_cast<size_t>(sc)]);
  const Tensor bias = *constant_of(graph, add.inputs[static_cast<size_t>(bc)]);
  if (!fits(graph, x, scale) || !fits(graph, x, bias)) return false;
  const ValueId y = add.outputs[0];
  const std::string name = add.name.empty() ? graph.unique_name("affine") : add.name + "_affine";
  passes::insert_affine(graph, add_id, x, scale, bias, y, name);
  graph.erase_node(add_id);
  graph.erase_node(mul_id);
  return true;
}

// Inference BatchNormalization: y = (x − mean)/√(var + ε)·γ + β = x·s + (β − mean·s).
bool fuse_batchnorm(Graph& graph, NodeId id) {
  const Node& bn = graph.node(id);
  if (!plain(bn, op::kBatchNormalization) || bn.inputs.size() != 5) return false;
  if (bn.int_attr("training_mode", 0) != 0) return false;
  const ValueId x = bn.inputs[0];
  const Shape& xs = graph.value(x).shape;
  if (graph.value(x).dtype != DType::kFloat32 || xs.size() < 2) return false;
  std::vector<std::vector<float>> p;
  for (size_t i = 1; i < 5; ++i) {
    const Tensor* t = constant_of(graph, bn.inputs[i]);
    if (t == nullptr || t->elements() != xs[1]) return false;
    p.push_back(passes::float_values(*t));
  }
  const double eps = bn.float_attr("epsilon", 1e-5f);
  std::vector<float> s(static_cast<size_t>(xs[1])), b(s.size());
  for (size_t c = 0; c < s.size(); ++c) {
    const double k = static_cast<double>(p[0][c]) / std::sqrt(static_cast<double>(p[3][c]) + eps);
    s[c] = static_cast<float>(k);
    b[c] = static_cast<float>(static_cast<double>(p[1][c]) - static_cast<double>(p[2][c]) * k);
  }
  const Shape shape = passes::channel_shape(xs[1], xs.size());
  const ValueId y = bn.outputs[0];
  const std::string name = bn.name.empty() ? graph.unique_name("affine") : bn.name + "_affine";
  passes::insert_affine(graph, id, x, passes::float_tensor(shape, s), passes::float_tensor(shape, b), y, name);
  graph.erase_node(id);
  return true;
}

}  // namespace

PassResult fuse_affine(Graph& graph, const PassOptions&) {
  PassResult result;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order) {
    if (!graph.is_live(id)) continue;  // erased by an earlier fusion (a scan of the order was O(n²))
    if (fuse_mul_add(graph, id) || fuse_batchnorm(graph, id)) ++result.nodes_rewritten;
  }
  return result;
}

}  // namespace memledger
