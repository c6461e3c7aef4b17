#include "memledger/exec/planned_arena.h"

#include <cstdint>

#include "memledger/core/error.h"

namespace memledger {

PlannedArena::PlannedArena(const Graph& graph, const MemoryPlan& plan) : graph_(graph), arena_bytes_(plan.arena_bytes) {
  const Liveness& live = plan.liveness;
  ML_CHECK(plan.offsets.size() == live.buffers.size(), "plan has {} offsets for {} buffers", plan.offsets.size(),
           live.buffers.size());
  constexpr int64_t kAlign = 64;
  storage_ = std::make_unique<std::byte[]>(static_cast<size_t>(arena_bytes_ + kAlign));
  const auto address = reinterpret_cast<uintptr_t>(storage_.get());
  base_ = storage_.get() + (kAlign - address % kAlign) % kAlign;
  value_offset_.assign(graph.value_count(), -1);
  int32_t nodes = 0;
  for (NodeId id : graph.order()) nodes = std::max(nodes, id.index + 1);
  workspace_offset_.assign(static_cast<size_t>(nodes), -1);
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    if (b.category == BufferCategory::kWorkspace) {
      if (b.node.index >= 0 && b.node.index < nodes)
        workspace_offset_[static_cast<size_t>(b.node.index)] = plan.offsets[i];
    } else if (b.value.valid() && static_cast<size_t>(b.value.index) < value_offset_.size()) {
      value_offset_[static_cast<size_t>(b.value.index)] = b.external ? kExternal : plan.offsets[i];
      if (b.external) external_[b.value.index].resize(static_cast<size_t>(b.physical_bytes));
    }
  }
}

std::span<std::byte> PlannedArena::at(int64_t offset, int64_t bytes, const std::string& what) {
  if (offset < 0) fail("the plan has no buffer for {}", what);
  if (offset + bytes > arena_bytes_)
    fail("{} at offset {} with {} B runs past the arena's end ({} B)", what, offset, bytes, arena_bytes_);
  return {base_ + offset, static_cast<size_t>(bytes)};
}

std::span<std::byte> PlannedArena::value_buffer(ValueId value, int64_t bytes) {
  const int64_t offset = static_cast<size_t>(value.index) < value_offset_.size() ? value_offset_[value.index] : -1;
  if (offset == kExternal) {
    // Outside the arena (an input the device keeps elsewhere): storage of its own, made with
    // the arena (its physical bytes; a larger request, which a plan does not make, grows it).
    std::vector<std::byte>& own = external_[value.index];
    if (static_cast<int64_t>(own.size()) < bytes) own.resize(static_cast<size_t>(bytes));
    return {own.data(), static_cast<size_t>(bytes)};
  }
  if (offset < 0) fail("the plan has no buffer for '{}'", graph_.value(value).name);
  return at(offset, bytes, graph_.value(value).name);
}

std::span<std::byte> PlannedArena::workspace(NodeId node, int64_t bytes) {
  const int64_t offset = node.index >= 0 && static_cast<size_t>(node.index) < workspace_offset_.size()
                             ? workspace_offset_[node.index]
                             : -1;
  if (offset < 0) fail("the plan has no workspace for node {}", graph_.node(node).label());
  if (offset + bytes > arena_bytes_) at(offset, bytes, "the workspace of " + graph_.node(node).label());  // fails
  return {base_ + offset, static_cast<size_t>(bytes)};
}

}  // namespace memledger
