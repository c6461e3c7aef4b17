// Running inside the plan (DESIGN.md §4.4, P5): a BufferProvider that hands the interpreter
// every value and workspace at its planned offset in one arena, and checks after every node
// that the node wrote nowhere but its own buffers. It proves a MemoryPlan by execution.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "memledger/exec/buffer_provider.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

struct ArenaViolation {
  enum class Kind {
    kWriteOutside,  // a node changed bytes outside its outputs and workspace
    kOverlapsLive,  // the plan puts a buffer over one that is still live
    kShortBuffer,   // the plan gives a buffer fewer bytes than its kernel writes
    kNotPlanned,    // the interpreter asked for a buffer the plan does not have
  };
  Kind kind = Kind::kWriteOutside;
  std::string node;     // the node running, "" before the first
  std::string buffer;   // the buffer concerned
  std::string message;  // one sentence naming both
};
std::string_view to_string(ArenaViolation::Kind kind);

// The arena is exactly the plan's arena_bytes, every buffer at exactly its planned offset,
// so buffers the plan overlaps in address really share memory (an in-place output is its
// input's bytes; a slot reused over time is reused). Guard bytes cannot sit between
// buffers the plan packs back to back without moving them, so the guards are checked
// differently (XNNPACK's guard idea, extended to the whole arena). The alternative, spreading
// the planned offsets apart to make room for guards, would also pull apart two live buffers
// the plan wrongly overlaps by less than the spread, and hide exactly the bug to catch. Instead:
//  - the arena has kGuardBytes of a guard pattern before and after it; every byte starts
//    as poison (a NaN pattern), and each output and workspace is poisoned when handed out
//    (an in-place output keeps its input's bytes);
//  - after each node, every byte of the arena outside what the node may write (its
//    outputs' element bytes at their planned offsets, its workspace) must be unchanged
//    since the node started: the end guards, free space, a buffer's layout padding and
//    every other buffer act as the guards of the node's buffers. A change is a
//    kWriteOutside violation naming the node, the bytes, what the plan has there and how
//    far past the end of which of the node's own buffers it lies;
//  - whenever a buffer is handed out (and a constant is loaded), its planned bytes must not
//    overlap any buffer still held by the interpreter or a constant live at that step
//    (kOverlapsLive): the plan's lifetimes are checked against the run's real ones; a
//    value planned smaller than its elements is reported when handed out (kShortBuffer),
//    a workspace only through the bytes its kernel really writes past the planned ones
//    (the interpreter asks for the host contract's workspace, which may round up more
//    than the device's rule did);
//  - a workspace still all poison after its node ran is reported as untouched (a stale
//    reservation).
// Constants are read by kernels from the graph, but their bytes are copied into their
// planned slot when they become live, so an overwritten constant is caught too. Buffers the
// plan keeps outside the arena (external constants and inputs) are not in it: an external
// input gets storage of its own, external constants are read from the graph only.
// Limits: a write that stores the very bytes already there is invisible, as with any
// guard; the interpreter computes in the host layout (dense, row-major), so under another device profile the run proves
// that the planned sizes and lifetimes suffice, not the device's byte order. A buffer the
// plan lacks, or that would run past the arena's end, gets a heap buffer (and a
// violation) so that the run can finish and report everything.
// Cost: one copy of the arena, and one compare of it per node.
class ArenaBufferProvider final : public BufferProvider {
 public:
  static constexpr int64_t kGuardBytes = 64;

  // `graph` and `plan` must outlive the provider; the plan must be of this graph, in the
  // interpreter's execution order (the graph's own).
  ArenaBufferProvider(const Graph& graph, const MemoryPlan& plan);

  std::span<std::byte> value_buffer(ValueId value, int64_t bytes) override;
  std::span<std::byte> workspace(NodeId node, int64_t bytes) override;
  void release(ValueId value) override;
  void release_workspace(NodeId node) override;

  // The checks after `node` ran; install as RunOptions::after_node.
  void after_node(NodeId node);

  const std::vector<ArenaViolation>& violations() const { return violations_; }
  // Names of the workspaces still all poison after their node ran.
  const std::vector<std::string>& untouched_workspaces() const { return untouched_; }
  int64_t arena_bytes() const { return arena_bytes_; }

 private:
  struct Range {
    int64_t begin = 0, end = 0;  // storage indices, end exclusive
  };
  void begin_step(int step);
  void load_constants(int up_to_step);
  void check_overlap(int buffer, int step);
  void check_writes(NodeId node);
  std::span<std::byte> heap_buffer(int64_t bytes);
  std::span<std::byte> hand_out(int buffer, int64_t bytes, int64_t element_bytes, bool poison);
  Range planned_range(int buffer) const;
  std::string describe_write(Range changed) const;
  void report(ArenaViolation::Kind kind, const std::string& buffer, std::string message);
  std::string node_label(int step) const;

  const Graph& graph_;
  const MemoryPlan& plan_;
  int64_t arena_bytes_ = 0;
  std::vector<std::byte> storage_;   // guard · arena · guard
  std::vector<std::byte> snapshot_;  // storage_ as the current node found it
  std::unordered_map<ValueId, int> buffer_of_value_;
  std::unordered_map<NodeId, int> buffer_of_workspace_;
  std::unordered_map<NodeId, int> step_of_node_;
  std::unordered_map<ValueId, int> producer_step_;
  std::vector<int> constants_;  // constant buffers by first step
  size_t constants_loaded_ = 0;
  std::set<int> held_;            // buffers the interpreter holds now
  std::vector<Range> write_set_;  // what the current node may change
  std::vector<int> own_buffers_;  // the current node's outputs and workspace
  std::optional<int> workspace_now_;
  int step_ = -1;  // the node running (or about to), -1 while inputs are copied
  bool snapshot_taken_ = false;
  std::vector<std::unique_ptr<std::byte[]>> heap_;
  std::unordered_map<int, std::vector<std::byte>> external_;  // buffers outside the arena
  std::vector<ArenaViolation> violations_;
  std::vector<std::string> untouched_;
};

}  // namespace memledger
