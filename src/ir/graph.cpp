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
  readers_.emplace_back();
  input_flag_.push_back(0);
  output_uses_.push_back(0);
  return ValueId{static_cast<int32_t>(values_.size() - 1)};
}

ValueId Graph::add_input(Value value) {
  const ValueId id = add_value(std::move(value));
  inputs_.push_back(id);
  input_flag_[at(id)] = 1;
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
  for (ValueId in : node.inputs)
    if (in.valid()) at(in);  // an input that is no value of this graph is an internal error
  for (ValueId out : node.outputs) value(out).producer = id;
  nodes_.push_back(std::move(node));
  // Keys only increase along the order (erasing leaves gaps), so one past the last will do.
  position_.push_back(order_.empty() ? 0 : position_[static_cast<size_t>(order_.back().index)] + 1);
  order_.push_back(id);
  link(id);
  return id;
}

NodeId Graph::insert_node_before(NodeId position, Node node) {
  ML_CHECK(is_live(position), "insert before a node that is not in the order");
  const size_t at_index = index_in_order(position);
  ML_CHECK(nodes_.size() < static_cast<size_t>(INT32_MAX), "too many nodes");
  const NodeId id{static_cast<int32_t>(nodes_.size())};
  for (ValueId in : node.inputs)
    if (in.valid()) at(in);
  for (ValueId out : node.outputs) value(out).producer = id;
  nodes_.push_back(std::move(node));
  order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(at_index), id);
  position_.push_back(-1);
  renumber();  // relative order kept: every readers list stays sorted
  link(id);
  return id;
}

void Graph::erase_node(NodeId id) {
  ML_CHECK(is_live(id), "erase of a node that is not in the order");
  unlink(id);
  order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(index_in_order(id)));
  position_[static_cast<size_t>(id.index)] = -1;  // the others keep their keys: no renumbering
  for (ValueId out : node(id).outputs)
    if (value(out).producer == id) value(out).producer = NodeId{};
}

void Graph::set_order(std::vector<NodeId> order) {
  if (order.size() != order_.size())
    fail("set_order: {} nodes given for a graph of {} live nodes", order.size(), order_.size());
  std::vector<char> done(nodes_.size(), 0);
  for (NodeId n : order) {
    if (n.index < 0 || static_cast<size_t>(n.index) >= nodes_.size() || position_[static_cast<size_t>(n.index)] < 0)
      fail("set_order: node #{} is not a live node of the graph", n.index);
    if (done[static_cast<size_t>(n.index)]) fail("set_order: {} appears twice", node(n).label());
    for (ValueId in : node(n).inputs) {
      if (!in.valid()) continue;
      const NodeId producer = value(in).producer;
      if (producer.valid() && position_[static_cast<size_t>(producer.index)] >= 0 &&
          !done[static_cast<size_t>(producer.index)])
        fail("set_order: {} comes before {}, which produces its input '{}'", node(n).label(), node(producer).label(),
             value(in).name);
    }
    done[static_cast<size_t>(n.index)] = 1;
  }
  order_ = std::move(order);
  renumber();
  const auto earlier = [&](NodeId a, NodeId b) {
    return position_[static_cast<size_t>(a.index)] < position_[static_cast<size_t>(b.index)];
  };
  for (auto& readers : readers_) std::sort(readers.begin(), readers.end(), earlier);
}

void Graph::replace_all_uses(ValueId from, ValueId to) {
  const std::vector<NodeId> users = readers_[at(from)];
  for (NodeId user : users) replace_uses_in(user, from, to);
  if (output_uses_[at(from)] > 0) {
    if (to.valid()) at(to);
    for (ValueId& out : outputs_)
      if (out == from) {
        out = to;
        --output_uses_[at(from)];
        if (to.valid()) ++output_uses_[at(to)];
      }
  }
}

void Graph::replace_uses_in(NodeId user, ValueId from, ValueId to) {
  Node& n = mutable_node(user);
  if (std::find(n.inputs.begin(), n.inputs.end(), from) == n.inputs.end() || from == to) return;
  if (to.valid()) at(to);
  const bool live = position_[static_cast<size_t>(user.index)] >= 0;
  if (live) unlink(user);
  for (ValueId& in : n.inputs)
    if (in == from) in = to;
  if (live) link(user);
}

void Graph::set_input(NodeId id, size_t index, ValueId v) {
  std::vector<ValueId> inputs = node(id).inputs;
  ML_CHECK(index < inputs.size(), "{}: input {} of {}", node(id).label(), index, inputs.size());
  inputs[index] = v;
  set_inputs(id, std::move(inputs));
}

void Graph::set_inputs(NodeId id, std::vector<ValueId> inputs) {
  for (ValueId in : inputs)
    if (in.valid()) at(in);
  Node& n = mutable_node(id);
  const bool live = position_[static_cast<size_t>(id.index)] >= 0;
  if (live) unlink(id);
  n.inputs = std::move(inputs);
  if (live) link(id);
}

void Graph::set_output(NodeId id, size_t index, ValueId v) {
  Node& n = mutable_node(id);
  ML_CHECK(index < n.outputs.size(), "{}: output {} of {}", n.label(), index, n.outputs.size());
  value(v).producer = id;
  n.outputs[index] = v;
}

void Graph::set_op(NodeId id, std::string op, std::string domain) {
  Node& n = mutable_node(id);
  n.op = std::move(op);
  n.domain = std::move(domain);
}

Attributes& Graph::attributes(NodeId id) { return mutable_node(id).attributes; }

void Graph::mark_output(ValueId v) {
  ++output_uses_[at(v)];
  outputs_.push_back(v);
}

void Graph::set_graph_outputs(std::vector<ValueId> outputs) {
  for (ValueId out : outputs) at(out);
  for (ValueId out : outputs_) --output_uses_[at(out)];
  outputs_ = std::move(outputs);
  for (ValueId out : outputs_) ++output_uses_[at(out)];
}

const Value& Graph::value(ValueId id) const { return values_[at(id)]; }
Value& Graph::value(ValueId id) { return values_[at(id)]; }
const Node& Graph::node(NodeId id) const {
  ML_CHECK(id.valid() && static_cast<size_t>(id.index) < nodes_.size(), "node id {}", id.index);
  return nodes_[static_cast<size_t>(id.index)];
}
Node& Graph::mutable_node(NodeId id) {
  ML_CHECK(id.valid() && static_cast<size_t>(id.index) < nodes_.size(), "node id {}", id.index);
  return nodes_[static_cast<size_t>(id.index)];
}
size_t Graph::at(ValueId id) const {
  ML_CHECK(id.valid() && static_cast<size_t>(id.index) < values_.size(), "value id {}", id.index);
  return static_cast<size_t>(id.index);
}

bool Graph::is_live(NodeId id) const {
  return id.valid() && static_cast<size_t>(id.index) < nodes_.size() && position_[static_cast<size_t>(id.index)] >= 0;
}

bool Graph::is_graph_input(ValueId id) const {
  return id.valid() && static_cast<size_t>(id.index) < values_.size() && input_flag_[static_cast<size_t>(id.index)];
}
bool Graph::is_graph_output(ValueId id) const {
  return id.valid() && static_cast<size_t>(id.index) < values_.size() &&
         output_uses_[static_cast<size_t>(id.index)] > 0;
}

std::vector<NodeId> Graph::consumers(ValueId id) const { return readers_[at(id)]; }

void Graph::link(NodeId id) {
  for (ValueId in : node(id).inputs)
    if (in.valid()) add_reader(in, id);
}

void Graph::unlink(NodeId id) {
  for (ValueId in : node(id).inputs)
    if (in.valid()) remove_reader(in, id);
}

// A readers list is sorted by position; a node reading one value twice is in it once.
void Graph::add_reader(ValueId v, NodeId id) {
  auto& readers = readers_[at(v)];
  const int32_t pos = position_[static_cast<size_t>(id.index)];
  const auto it = std::lower_bound(readers.begin(), readers.end(), pos,
                                   [&](NodeId r, int32_t p) { return position_[static_cast<size_t>(r.index)] < p; });
  if (it == readers.end() || *it != id) readers.insert(it, id);
}

void Graph::remove_reader(ValueId v, NodeId id) {
  auto& readers = readers_[at(v)];
  const int32_t pos = position_[static_cast<size_t>(id.index)];
  const auto it = std::lower_bound(readers.begin(), readers.end(), pos,
                                   [&](NodeId r, int32_t p) { return position_[static_cast<size_t>(r.index)] < p; });
  if (it != readers.end() && *it == id) readers.erase(it);
}

size_t Graph::index_in_order(NodeId id) const {
  const int32_t key = position_[static_cast<size_t>(id.index)];
  const auto it = std::lower_bound(order_.begin(), order_.end(), key,
                                   [&](NodeId n, int32_t k) { return position_[static_cast<size_t>(n.index)] < k; });
  return static_cast<size_t>(it - order_.begin());
}

void Graph::renumber() {
  for (size_t i = 0; i < order_.size(); ++i) position_[static_cast<size_t>(order_[i].index)] = static_cast<int32_t>(i);
}

std::vector<ValueId> Graph::reachable_values() const {
  // Walk back from the outputs through producers.
  std::vector<char> reached(values_.size(), 0);
  std::vector<ValueId> stack(outputs_.begin(), outputs_.end());
  while (!stack.empty()) {
    const ValueId v = stack.back();
    stack.pop_back();
    if (!v.valid() || reached[static_cast<size_t>(v.index)]) continue;
    reached[static_cast<size_t>(v.index)] = 1;
    const NodeId p = value(v).producer;
    if (p.valid() && position_[static_cast<size_t>(p.index)] >= 0)
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
