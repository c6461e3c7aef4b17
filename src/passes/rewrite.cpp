#include "rewrite.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "memledger/ir/affine.h"
#include "memledger/ir/op_table.h"

namespace memledger::passes {

const Tensor* constant_of(const Graph& graph, ValueId id) {
  if (!id.valid()) return nullptr;
  const Value& v = graph.value(id);
  // A quantized constant's integers stand for scale · (q − zero point): a pass that reads
  // values as numbers must not take them for the reals.
  return v.constant && !v.quant ? &*v.constant : nullptr;
}

Shape broadcast_with(const Graph& graph, const Node& node, ValueId from, const Shape& to_shape) {
  Shape result;
  bool first = true;
  for (ValueId in : node.inputs) {
    if (!in.valid()) continue;
    const Shape& s = in == from ? to_shape : graph.value(in).shape;
    result = first ? s : broadcast_shapes(result, s, node.label());
    first = false;
  }
  return result;
}

bool broadcast_allows(const Graph& graph, NodeId consumer, ValueId from, const Shape& to_shape) {
  const Node& n = graph.node(consumer);
  if (!broadcasts(n) || n.outputs.size() != 1) return false;
  // Affine's x (input 0) sets the output shape by contract; only parameters may shrink.
  if (is_affine(n) && n.inputs[0] == from) return false;
  try {
    return broadcast_with(graph, n, from, to_shape) == graph.value(n.outputs[0]).shape;
  } catch (const Error&) {
    return false;
  }
}

std::optional<Tensor> compact_tensor(const Tensor& t) {
  const Shape& shape = t.shape();
  const size_t rank = shape.size();
  const int64_t n = t.elements();
  const size_t eb = static_cast<size_t>(host_element_bytes(t.dtype()));
  const auto bytes = t.bytes();
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * shape[d];

  std::vector<bool> repeats(rank, false);
  bool any = false;
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] <= 1) continue;
    bool same = true;
    for (int64_t i = 0; i < n && same; ++i) {
      const int64_t c = (i / stride[d]) % shape[d];
      if (c == 0) continue;
      const int64_t j = i - c * stride[d];
      same =
          std::memcmp(bytes.data() + static_cast<size_t>(i) * eb, bytes.data() + static_cast<size_t>(j) * eb, eb) == 0;
    }
    repeats[d] = same;
    any = any || same;
  }
  if (!any) return std::nullopt;

  Shape compact = shape;
  for (size_t d = 0; d < rank; ++d)
    if (repeats[d]) compact[d] = 1;
  Tensor out(t.dtype(), compact);
  const int64_t m = out.elements();
  auto dst = out.bytes();
  for (int64_t o = 0; o < m; ++o) {
    // Coordinates of o in the compact shape are those of the source with 0 on repeated axes.
    int64_t rest = o, src = 0;
    for (size_t d = rank; d-- > 0;) {
      const int64_t c = rest % compact[d];
      rest /= compact[d];
      src += c * stride[d];
    }
    std::memcpy(dst.data() + static_cast<size_t>(o) * eb, bytes.data() + static_cast<size_t>(src) * eb, eb);
  }
  return out;
}

bool all_near(const Tensor& t, double v, double tol) {
  for (int64_t i = 0; i < t.elements(); ++i)
    if (!(std::abs(t.element_as_double(i) - v) <= tol)) return false;
  return true;
}

bool forward_value(Graph& graph, ValueId from, ValueId to) {
  if (from == to) return false;
  if (graph.is_graph_output(from)) {
    if (graph.is_graph_input(to) || graph.value(to).is_constant() || graph.is_graph_output(to)) return false;
    std::swap(graph.value(from).name, graph.value(to).name);
  }
  graph.replace_all_uses(from, to);
  return true;
}

bool erase_if_unused(Graph& graph, NodeId node) {
  for (ValueId out : graph.node(node).outputs)
    if (graph.is_graph_output(out) || !graph.consumers(out).empty()) return false;
  graph.erase_node(node);
  return true;
}

NodeId producer_of(const Graph& graph, ValueId id) {
  if (!id.valid()) return {};
  const NodeId p = graph.value(id).producer;
  return graph.is_live(p) ? p : NodeId{};
}

std::optional<std::vector<int64_t>> int_values(const Graph& graph, ValueId id) {
  const Tensor* t = constant_of(graph, id);
  if (t == nullptr || (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->elements(); ++i) out.push_back(static_cast<int64_t>(t->element_as_double(i)));
  return out;
}

Tensor float_tensor(const Shape& shape, const std::vector<float>& values) {
  Tensor t(DType::kFloat32, shape);
  ML_CHECK(static_cast<size_t>(t.elements()) == values.size(), "float_tensor: {} values for {}", values.size(),
           shape_to_string(shape));
  std::copy(values.begin(), values.end(), t.data<float>().begin());
  return t;
}

std::vector<float> float_values(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.elements()));
  for (int64_t i = 0; i < t.elements(); ++i) out[static_cast<size_t>(i)] = static_cast<float>(t.element_as_double(i));
  return out;
}

}  // namespace memledger::passes
