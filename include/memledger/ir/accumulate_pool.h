// memledger.AccumulatePool, the operator that computes a global average pool row strip by
// row strip, so a squeeze-and-excitation block can lie inside a patched stage (plan/patch.h):
// its pooled input is never held whole. y = acc + the per-(N, C) sums of strip x, where acc
// (input 1, optional: the first strip has none) carries the sums of the strips above;
// with attribute `count` > 0 (the last strip) y is the mean, sum / count, as float32.
//
// The sums are float64 in the order the reference GlobalAveragePool adds (exec/pool_sum.h):
// row-major over each plane, one strip after the other, so strips that are full rows taken
// top to bottom give exactly the reference's pooled values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/ir/graph.h"
#include "memledger/ir/shape_rule.h"

namespace memledger {

inline constexpr std::string_view kAccumulatePoolOp = "AccumulatePool";

bool is_accumulate_pool(const Node& node);

// Output type: [N, C, 1, 1] of strip x (input 0), float64 sums, or float32 means when
// `count` > 0.
std::vector<TensorType> accumulate_pool_shape(const ShapeInputs& in);

// The kernel's check: x a float32 4-D strip, acc (when present) float64 [N, C, 1, 1] of
// x's N and C, y of the type the shape rule gives. Returns why the node breaks it, or empty.
std::string check_accumulate_pool(const Graph& graph, const Node& node);

// y = AccumulatePool(strip, acc) with `count` (0: sums, > 0: the mean over that many
// elements per plane). `acc` may be invalid (the first strip). The caller adds it.
Node accumulate_pool_node(ValueId strip, ValueId acc, int64_t count, ValueId y, const std::string& name);

}  // namespace memledger
