#include "memledger/ir/graph.h"

#include <algorithm>
#include <unordered_set>

#include "memledger/core/error.h"

namespace memledger {

namespace {
template <typename T>
const T* attr_as(const Node& node, const std::string& key, const char* kind) {
  const auto it = node.attributes.find(key);
  if (it == node.attributes.end()) return nullptr;
  const T* value = std::get_if<T>(&it->second);
  if (!value) fail("node {}: attribute '{}' must be {}", node.label(), key, kind);
  return value;
}
}  // namespace

int64_t Node::int_attr(const std::string& key, int64_t fallback) const {
  const auto* v = attr_as<int64_t>(*this, key, "an integer");
  return v ? *v : fallback;
}
float Node::float_attr(const std::string& key, float fallback) const {
  const auto it = attributes.find(key);
  if (it != attributes.end())
    if (const auto* i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
  const auto* v = attr_as<float>(*this, key, "a float");
  return v ? *v : fallback;
}
std::string Node::string_attr(const std::string& key, const std::string& fallback) const {
  const auto* v = attr_as<std::string>(*this, key, "a string");
  return v ? *v : fallback;
}
std::vector<int64_t> Node::ints_attr(const std::string& key, const std::vector<int64_t>& fallback) const {
  const auto* v = attr_as<std::vector<int64_t>>(*this, key, "a list of integers");
  return v ? *v : fallback;
}
std::string Node::label() const { return name.empty() ? op : op + " '" + name + "'"; }

ValueId Graph::add_value(Value value) {
  ML_CHECK(values_.size() < static_cast<size_t>(INT32_MAX), "too many values");
  if (value.roles.empty()) value.roles = unknown_roles(value.shape.size());
  ML_CHECK(value.roles.size() == value.shape.size(), "value '{}': {} roles for rank {}", value.name, value.roles.size(),
           value.shape.size());
  values_.push_back(std::move(value));
  return ValueId{static_cast<int32_t>(values_.size() - 1)};
}

ValueId Graph::add_input(Value value) {
  const ValueId id = add_value(std::move(value));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string value_name, Tensor data, AxisRoles roles) {
  Value value;
  value.name = std::move(value_name);
  value.dtype = data.dtype();
  value.shape = data.shape();
  value.roles = std::move(roles);
  value.constant = std::move(data);
  return add_value(std::move(value));
}

NodeId Graph::add_node(Node node) {
  ML_CHECK(nodes_.size() < static_cast<size_t>(INT32_MAX), "too many nodes");
  const NodeId id{static_cast<int32_t>(nodes_.size())};
  for (ValueId out : node.outputs) value(out).producer = id;
  nodes_.push_back(std::move(node));
  order_.push_back(id);
  return id;
}

NodeId Graph::insert_node_before(NodeId position, Node node) {
  const auto it = std::find(order_.begin(), order_.end(), position);
  ML_CHECK(it != order_.end(), "insert before a node that is not in the order");
  const size_t at = static_cast<size_t>(it - order_.begin());
  const NodeId id = add_node(std::move(node));
  order_.pop_back();
  order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(at), id);
  return id;
}

void Graph::erase_node(NodeId id) {
  const auto it = std::find(order_.begin(), order_.end(), id);
  ML_CHECK(it != order_.end(), "erase of a node that is not in the order");
  order_.erase(it);
  for (ValueId out : node(id).outputs)
    if (value(out).producer == id) value(out).producer = NodeId{};
}

void Graph::set_order(std::vector<NodeId> order) {
  if (order.size() != order_.size())
    fail("set_order: {} nodes given for a graph of {} live nodes", order.size(), order_.size());
  std::vector<char> live(nodes_.size(), 0), done(nodes_.size(), 0);
  for (NodeId n : order_) live[static_cast<size_t>(n.index)] = 1;
  for (NodeId n : order) {
    if (n.index < 0 || static_cast<size_t>(n.index) >= nodes_.size() || !live[static_cast<size_t>(n.index)])
      fail("set_order: node #{} is not a live node of the graph", n.index);
    if (done[static_cast<size_t>(n.index)]) fail("set_order: {} appears twice", node(n).label());
    for (ValueId in : node(n).inputs) {
      if (!in.valid()) continue;
      const NodeId producer = value(in).producer;
      if (producer.valid() && live[static_cast<size_t>(producer.index)] && !done[static_cast<size_t>(producer.index)])
        fail("set_order: {} comes before {}, which produces its input '{}'", node(n).label(), node(producer).label(),
             value(in).name);
    }
    done[static_cast<size_t>(n.index)] = 1;
  }
  order_ = std::move(order);
}

void Graph::replace_all_uses(ValueId from, ValueId to) {
  for (NodeId n : order_)
    for (ValueId& in : node(n).inputs)
      if (in == from) in = to;
  for (ValueId& out : outputs_)
    if (out == from) out = to;
}

const Value& Graph::value(ValueId id) const {
  ML_CHECK(id.valid() && static_cast<size_t>(id.index) < values_.size(), "value id {}", id.index);
  return values_[static_cast<size_t>(id.index)];
}
Value& Graph::value(ValueId id) {
  ML_CHECK(id.valid() && static_cast<size_t>(id.index) < values_.size(), "value id {}", id.index);
  return values_[static_cast<size_t>(id.index)];
}
const Node& Graph::node(NodeId id) const {
  ML_CHECK(id.valid() && static_cast<size_t>(id.index) < nodes_.size(), "node id {}", id.index);
  return nodes_[static_cast<size_t>(id.index)];
}
Node& Graph::node(NodeId id) {
  ML_CHECK(id.valid() && static_cast<size_t>(id.index) < nodes_.size(), "node id {}", id.index);
  return nodes_[static_cast<size_t>(id.index)];
}

bool Graph::is_graph_input(ValueId id) const { return std::find(inputs_.begin(), inputs_.end(), id) != inputs_.end(); }
bool Graph::is_graph_output(ValueId id) const {
  return std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end();
}

std::vector<NodeId> Graph::consumers(ValueId id) const {
  std::vector<NodeId> found;
  for (NodeId n : order_) {
    const auto& ins = node(n).inputs;
    if (std::find(ins.begin(), ins.end(), id) != ins.end()) found.push_back(n);
  }
  return found;
}

std::vector<ValueId> Graph::reachable_values() const {
  // Walk back from the outputs through producers.
  std::vector<char> reached(values_.size(), 0);
  std::vector<char> node_live(nodes_.size(), 0);
  for (NodeId n : order_) node_live[static_cast<size_t>(n.index)] = 1;
  std::vector<ValueId> stack(outputs_.begin(), outputs_.end());
  while (!stack.empty()) {
    const ValueId v = stack.back();
    stack.pop_back();
    if (!v.valid() || reached[static_cast<size_t>(v.index)]) continue;
    reached[static_cast<size_t>(v.index)] = 1;
    const NodeId p = value(v).producer;
    if (p.valid() && node_live[static_cast<size_t>(p.index)])
      for (ValueId in : node(p).inputs) stack.push_back(in);
  }
  std::vector<ValueId> result;
  for (ValueId in : inputs_) result.push_back(in);
  std::vector<ValueId> constants;
  for (size_t i = 0; i < values_.size(); ++i)
    if (reached[i] && values_[i].is_constant()) constants.push_back(ValueId{static_cast<int32_t>(i)});
  std::sort(constants.begin(), constants.end(), [&](ValueId a, ValueId b) { return value(a).name < value(b).name; });
  result.insert(result.end(), constants.begin(), constants.end());
  for (NodeId n : order_)
    for (ValueId out : node(n).outputs)
      if (reached[static_cast<size_t>(out.index)]) result.push_back(out);
  return result;
}

std::string Graph::unique_name(const std::string& base) const {
  std::unordered_set<std::string> names;
  for (const auto& v : values_) names.insert(v.name);
  if (!names.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!names.count(candidate)) return candidate;
  }
}

}  // namespace memledger
