// Building an Affine in place of existing nodes (internal to src/passes): the parameters
// stored compact, the Affine writing the value the replaced nodes wrote.
#pragma once

#include <string>
#include <vector>

#include "memledger/ir/graph.h"

namespace memledger::passes {

// Per-channel scale and bias for a rank-`rank` input with channels on axis 1: shape
// [1,C,1,...] (rank ≥ 2).
Shape channel_shape(int64_t channels, size_t rank);

// Inserts y = Affine(x, scale, bias) before `position`, writing `y` (an existing value),
// with each parameter stored compact when its values repeat.
NodeId insert_affine(Graph& graph, NodeId position, ValueId x, const Tensor& scale, const Tensor& bias, ValueId y,
                     const std::string& name);

}  // namespace memledger::passes
