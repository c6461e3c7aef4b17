// The graph IR: values (dtype, static shape, axis roles, and for constants their compact
// data) and nodes (an operator applied to values) in execution order. The IR knows no
// file format (onnx/ converts) and no device (a value's layout under a profile comes from
// device/tensor_layout.h given its shape, dtype and roles).
//
// Storage is append-only and ids stay valid for the graph's life; erasing a node only
// takes it out of the execution order. Values nothing refers to any more are simply not
// reachable: the printer and the exporter show what is reachable from the outputs.
//
// The graph keeps an index of each value's readers (and of its graph outputs), so
// consumers() and is_graph_output() answer without a scan. The index cannot go stale: a
// node is handed out read-only, and every edit of its inputs goes through a Graph method.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memledger/core/axis_role.h"
#include "memledger/core/dtype.h"
#include "memledger/core/shape.h"
#include "memledger/core/shared_tensor.h"
#include "memledger/core/tensor.h"
#include "memledger/ir/attribute.h"
#include "memledger/ir/ids.h"
#include "memledger/ir/quantization.h"

namespace memledger {

struct Value {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  AxisRoles roles;                    // one per axis; kOther where no operator states a role
  SharedTensor constant;              // a constant's values, stored once and compact, shared by copies
  NodeId producer;                    // invalid for graph inputs and constants
  std::optional<Quantization> quant;  // integers standing for reals (ir/quantization.h)
  // A variable (TFLite's SVDF state): live for the whole program in the arena, whatever
  // the profile does with constants; `constant` holds its initial values. An operator
  // whose record names a state input writes the new state over it.
  bool persistent = false;

  bool is_constant() const { return constant.has_value(); }
};

struct Node {
  std::string name;
  std::string op;               // "Conv", or a memledger operator ("Affine")
  std::string domain;           // "" for ONNX's default domain, "memledger" for ours
  std::vector<ValueId> inputs;  // an invalid id stands for an omitted optional input
  std::vector<ValueId> outputs;
  Attributes attributes;

  // Typed attribute access; a present attribute of the wrong kind is an Error naming the node.
  int64_t int_attr(const std::string& key, int64_t fallback) const;
  float float_attr(const std::string& key, float fallback) const;
  std::string string_attr(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> ints_attr(const std::string& key, const std::vector<int64_t>& fallback = {}) const;
  bool has_attr(const std::string& key) const { return attributes.count(key) != 0; }
  // A node's name for messages: "Conv 'conv1'" or "Conv #3".
  std::string label() const;
};

class Graph {
 public:
  std::string name = "main";
  int64_t opset = 13;
  Requantization requantization = Requantization::kFloatScale;  // the model source's rule

  ValueId add_value(Value value);
  ValueId add_input(Value value);
  ValueId add_constant(std::string value_name, Tensor data, AxisRoles roles = {});
  // Appends to the execution order; sets each output's producer.
  NodeId add_node(Node node);
  // Inserts before `position` in the execution order.
  NodeId insert_node_before(NodeId position, Node node);
  // Takes the node out of the execution order (its values remain, unreachable).
  void erase_node(NodeId node);
  void mark_output(ValueId value);
  // Replaces the execution order (a memory-aware schedule): `order` must hold every live
  // node exactly once, each after the producers of its inputs; an Error naming the node
  // otherwise, and the order is left as it was.
  void set_order(std::vector<NodeId> order);

  // Every use of `from` (node inputs and graph outputs) now refers to `to`.
  void replace_all_uses(ValueId from, ValueId to);
  // Edits of one node (the node itself is read-only outside the graph, so that the index
  // of readers stays exact). replace_uses_in: each input of `user` that is `from` is `to`.
  void replace_uses_in(NodeId user, ValueId from, ValueId to);
  void set_input(NodeId node, size_t index, ValueId value);
  void set_inputs(NodeId node, std::vector<ValueId> inputs);
  // The node's output `index` is `value` from now on, and `value`'s producer the node.
  void set_output(NodeId node, size_t index, ValueId value);
  void set_op(NodeId node, std::string op, std::string domain = "");
  Attributes& attributes(NodeId node);
  void set_graph_outputs(std::vector<ValueId> outputs);

  const Value& value(ValueId id) const;
  Value& value(ValueId id);
  const Node& node(NodeId id) const;

  // Live nodes in execution order.
  const std::vector<NodeId>& order() const { return order_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  size_t value_count() const { return values_.size(); }

  // The node is in the execution order (not erased); O(1).
  bool is_live(NodeId id) const;
  bool is_graph_input(ValueId id) const;
  bool is_graph_output(ValueId id) const;
  // Live nodes that read `id`, in execution order (each once); from the index, O(result).
  std::vector<NodeId> consumers(ValueId id) const;
  // Values reachable from the outputs through live nodes, in a stable order:
  // inputs, then constants by name, then node outputs in execution order.
  std::vector<ValueId> reachable_values() const;
  // A value name not used yet, starting from `base`.
  std::string unique_name(const std::string& base) const;

 private:
  Node& mutable_node(NodeId id);
  size_t at(ValueId id) const;
  // Adds or removes a live node in the readers lists of its inputs.
  void link(NodeId node);
  void unlink(NodeId node);
  void add_reader(ValueId value, NodeId node);
  void remove_reader(ValueId value, NodeId node);
  // Where a live node stands in order_ (a binary search over the keys).
  size_t index_in_order(NodeId node) const;
  void renumber();  // keys 0, 1, 2... along the order

  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<NodeId> order_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  // The index, kept in step by every edit: per value its live readers sorted by their
  // place in the order, whether it is a graph input, how often it is a graph output; per
  // node a key that increases along the order (-1 once erased). Erasing leaves a gap in
  // the keys instead of renumbering, so erasing node after node stays linear; inserting
  // and reordering (O(n) anyway) renumber.
  std::vector<std::vector<NodeId>> readers_;
  std::vector<char> input_flag_;
  std::vector<int32_t> output_uses_;
  std::vector<int32_t> position_;
};

}  // namespace memledger
