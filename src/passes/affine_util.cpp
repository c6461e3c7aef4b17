#include "affine_util.h"

#include "memledger/ir/affine.h"
#include "rewrite.h"

namespace memledger::passes {

Shape channel_shape(int64_t channels, size_t rank) {
  Shape s(rank, 1);
  s[1] = channels;
  return s;
}

NodeId insert_affine(Graph& graph, NodeId position, ValueId x, const Tensor& scale, const Tensor& bias, ValueId y,
                     const std::string& name) {
  const AxisRoles roles = graph.value(x).roles;
  const auto parameter = [&](const Tensor& t, const std::string& what) {
    const std::optional<Tensor> compact = compact_tensor(t);
    const Tensor& stored = compact ? *compact : t;
    AxisRoles r = roles.size() == stored.shape().size() ? roles : AxisRoles{};
    return graph.add_constant(graph.unique_name(name + "_" + what), stored, r);
  };
  const ValueId s = parameter(scale, "scale");
  const ValueId b = parameter(bias, "bias");
  return graph.insert_node_before(position, {.name = name,
                                             .op = std::string(kAffineOp),
                                             .domain = std::string(kMemledgerDomain),
                                             .inputs = {x, s, b},
                                             .outputs = {y},
                                             .attributes = {{"rule", std::string("current")}}});
}

}  // namespace memledger::passes
