// Helpers the passes share (internal to src/passes): reading constants, broadcasting
// rules of elementwise operators, compacting repeated tensors, and rewiring uses without
// renaming the graph's outputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/ir/graph.h"

namespace memledger::passes {

// The constant data of `id`, or null when it is not a constant (or is invalid, or quantized:
// its integers are not the numbers they stand for).
const Tensor* constant_of(const Graph& graph, ValueId id);

// The broadcast of `node`'s input shapes, with input `from` read as `to` (of `to_shape`).
Shape broadcast_with(const Graph& graph, const Node& node, ValueId from, const Shape& to_shape);

// A consumer of `from` may read `to` instead: it broadcasts and its output shape stays.
bool broadcast_allows(const Graph& graph, NodeId consumer, ValueId from, const Shape& to_shape);

// The axes along which `t`'s values repeat (every slice equals the first); then `t` with
// extent 1 on those axes, or nothing when no axis of extent > 1 repeats.
std::optional<Tensor> compact_tensor(const Tensor& t);

// Every element equals `v` within `tol`.
bool all_near(const Tensor& t, double v, double tol = 0);

// Replaces every use of `from` by `to`. When `from` is a graph output, `to` takes its
// name so the model's interface does not change; that is refused (false) when `to` is a
// graph input, a constant or already an output.
bool forward_value(Graph& graph, ValueId from, ValueId to);

// Erases `node` when none of its outputs is used or is a graph output.
bool erase_if_unused(Graph& graph, NodeId node);

// The single live producer of `id` or an invalid id.
NodeId producer_of(const Graph& graph, ValueId id);

// Values of an int64 constant (shape, repeats, axes) or nothing.
std::optional<std::vector<int64_t>> int_values(const Graph& graph, ValueId id);

// A float32 tensor from `values` with `shape`.
Tensor float_tensor(const Shape& shape, const std::vector<float>& values);

// `t` as float32 values (any dtype).
std::vector<float> float_values(const Tensor& t);

}  // namespace memledger::passes
