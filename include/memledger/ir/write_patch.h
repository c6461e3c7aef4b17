// memledger.WritePatch, the operator that assembles a patched stage's output (plan/patch.h):
// y = x with `patch` copied in at `starts`. Input 0 (the previous patches' result) is
// optional; the first patch of a stage has none, and its y starts as zeros. The kernel's
// contract lets y take input 0's buffer, so a whole stage output is one buffer written
// patch by patch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "memledger/ir/affine.h"
#include "memledger/ir/graph.h"

namespace memledger {

inline constexpr std::string_view kWritePatchOp = "WritePatch";

bool is_write_patch(const Node& node);

// The shape rule: y has the shape of attribute `shape` (input 0's shape, when present),
// the patch has y's rank and dtype, and starts + patch extent stays inside y on every axis.
// Returns why the node breaks it, or empty.
std::string check_write_patch(const Graph& graph, const Node& node);

// The node y = WritePatch(accumulator, patch) writing `patch` at `starts` into y of `shape`;
// `accumulator` may be invalid (the first patch). The caller adds it to the graph.
Node write_patch_node(ValueId accumulator, ValueId patch, const std::vector<int64_t>& starts, const Shape& shape,
                      ValueId y, const std::string& name);

}  // namespace memledger
