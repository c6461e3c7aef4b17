// The arena without the guards: every value and workspace at its planned offset in one
// allocation made up front, nothing checked per node. The guarded ArenaBufferProvider
// proves a plan (bit-identical outputs, no write outside a node's buffers); this one runs
// it at full speed, for `run --arena --repeat` and the latency benchmark, and allocates
// nothing once made. A value the plan keeps outside the arena (an MCU profile's input) has
// storage of its own, made with it.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "memledger/exec/buffer_provider.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

class PlannedArena final : public BufferProvider {
 public:
  // `plan` must be of `graph`; the arena is its arena_bytes, 64-byte aligned.
  PlannedArena(const Graph& graph, const MemoryPlan& plan);

  // A buffer the plan lacks, or one past the arena's end, is an Error naming it.
  std::span<std::byte> value_buffer(ValueId value, int64_t bytes) override;
  std::span<std::byte> workspace(NodeId node, int64_t bytes) override;
  void release(ValueId) override {}
  void release_workspace(NodeId) override {}

  int64_t arena_bytes() const { return arena_bytes_; }

 private:
  std::span<std::byte> at(int64_t offset, int64_t bytes, const std::string& what);

  const Graph& graph_;
  int64_t arena_bytes_ = 0;
  std::unique_ptr<std::byte[]> storage_;
  std::byte* base_ = nullptr;
  static constexpr int64_t kExternal = -2;              // a value_offset_ outside the arena
  std::vector<int64_t> value_offset_;                   // by value index, -1 when not planned
  std::map<int32_t, std::vector<std::byte>> external_;  // storage of the values outside it
  std::vector<int64_t> workspace_offset_;               // by node index, -1 when not planned
};

}  // namespace memledger
