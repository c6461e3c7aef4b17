#include "memledger/passes/fold_batchnorm.h"

#include <cmath>
#include <vector>

#include "memledger/ir/op_names.h"
#include "rewrite.h"

namespace memledger {
namespace {

using passes::constant_of;

// Conv(x, W, B) → BatchNormalization, the Conv's output read by nothing else:
// W'[m] = W[m]·s[m], B'[m] = (B[m] − mean[m])·s[m] + β[m], s = γ/√(var + ε).
bool fold(Graph& graph, NodeId bn_id) {
  const Node& bn = graph.node(bn_id);
  if (!bn.domain.empty() || bn.op != op::kBatchNormalization || bn.inputs.size() != 5 || bn.outputs.size() != 1)
    return false;
  if (bn.int_attr("training_mode", 0) != 0) return false;
  const ValueId conv_out = bn.inputs[0];
  const NodeId conv_id = passes::producer_of(graph, conv_out);
  if (!conv_id.valid() || graph.is_graph_output(conv_out) || graph.consumers(conv_out).size() != 1) return false;
  const Node& conv = graph.node(conv_id);
  if (!conv.domain.empty() || conv.op != op::kConv || conv.inputs.size() < 2) return false;
  const Tensor* w = constant_of(graph, conv.inputs[1]);
  const Tensor* b = conv.inputs.size() > 2 ? constant_of(graph, conv.inputs[2]) : nullptr;
  if (w == nullptr || w->dtype() != DType::kFloat32 || (conv.inputs.size() > 2 && conv.inputs[2].valid() && !b))
    return false;
  const int64_t m = w->shape()[0];
  std::vector<std::vector<float>> p;
  for (size_t i = 1; i < 5; ++i) {
    const Tensor* t = constant_of(graph, bn.inputs[i]);
    if (t == nullptr || t->elements() != m) return false;
    p.push_back(passes::float_values(*t));
  }
  const double eps = bn.float_attr("epsilon", 1e-5f);
  Tensor w2 = *w;
  std::vector<float> b2(static_cast<size_t>(m));
  const std::vector<float> b_old = b ? passes::float_values(*b) : std::vector<float>(static_cast<size_t>(m), 0.f);
  const int64_t per = w->elements() / m;
  auto wd = w2.data<float>();
  for (int64_t o = 0; o < m; ++o) {
    const size_t c = static_cast<size_t>(o);
    const double s = static_cast<double>(p[0][c]) / std::sqrt(static_cast<double>(p[3][c]) + eps);
    for (int64_t i = 0; i < per; ++i) {
      float& v = wd[static_cast<size_t>(o * per + i)];
      v = static_cast<float>(static_cast<double>(v) * s);
    }
    b2[c] = static_cast<float>((static_cast<double>(b_old[c]) - p[2][c]) * s + p[1][c]);
  }
  const std::string base = conv.name.empty() ? "conv" : conv.name;
  const ValueId wv = graph.add_constant(graph.unique_name(base + "_w_folded"), std::move(w2));
  const ValueId bv = graph.add_constant(graph.unique_name(base + "_b_folded"), passes::float_tensor({m}, b2));
  graph.set_inputs(conv_id, {graph.node(conv_id).inputs[0], wv, bv});
  // The Conv now writes what the BatchNormalization wrote.
  const ValueId y = graph.node(bn_id).outputs[0];
  graph.erase_node(bn_id);
  graph.set_output(conv_id, 0, y);
  return true;
}

}  // namespace

PassResult fold_batchnorm(Graph& graph, const PassOptions&) {
  PassResult result;
  const std::vector<NodeId> order = graph.order();
  for (NodeId id : order)
    if (fold(graph, id)) ++result.nodes_rewritten;
  return result;
}

}  // namespace memledger
