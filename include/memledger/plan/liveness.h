// Every buffer of a scheduled graph and the steps during which it is live (DESIGN.md §4.2,
// P6). Step i is the i-th node of the execution order. Graph inputs are live from step 0
// to their last use, outputs from their producer to the last step, activations from their
// producer to their last consumer, constants from first to last use (or for the whole
// program when the profile keeps them resident), a kernel's workspace during its step.
//
// In-place: a node's output takes an input's buffer only where the kernel's contract
// allows it, that input has no reader after this step (a bypass branch forbids it), it is
// not a constant, not a graph output, not a graph input unless inputs are donated (and in
// the arena), and the output is no larger. Such an output is an alias: it owns no bytes of
// its own.
//
// Persistent buffers (variables: the constant a node reads as the state input its op record
// names, TFLite's SVDF state; the constant holds the initial state) are live for the whole
// program and always in the arena, whatever the profile does with constants; the node's
// state output is written over the state (an alias of the persistent buffer). TFLite Micro counts them
// apart from the non-persistent head, and so does the plan (memory_plan.h).
//
// External buffers: under `constants = "external"` constants stay in read-only memory
// outside the arena, under `inputs = "external"` graph inputs stay in their own buffer;
// they keep their entries (sizes, steps) but take no arena bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memledger/device/profile.h"
#include "memledger/ir/graph.h"
#include "memledger/ir/op_table.h"

namespace memledger {

enum class BufferCategory { kInput, kOutput, kActivation, kConstant, kWorkspace, kPersistent };
std::string_view to_string(BufferCategory category);

struct PlanOptions {
  // The caller hands graph inputs over to the program (as when the program itself loads
  // them into local memory): an output may then be written over an input.
  bool donate_inputs = false;
  // Allow in-place reuse at all; off gives the no-reuse figures.
  bool in_place = true;
  // Where each node's contract comes from; empty: the op table (op_contract). The kernel
  // set that will run the plan supplies its own (exec's contract_source: the fast set's
  // workspaces are oneDNN's scratchpads and reorder buffers).
  std::function<KernelContract(const Graph&, NodeId, const DeviceProfile&)> contracts;
};

struct LiveBuffer {
  std::string name;
  BufferCategory category = BufferCategory::kActivation;
  ValueId value;  // invalid for a workspace
  NodeId node;    // the owning node of a workspace
  int64_t logical_bytes = 0;
  int64_t physical_bytes = 0;
  int first_step = 0;  // inclusive
  int last_step = 0;   // inclusive
  // The buffer whose memory this one takes (in-place); it owns no bytes of its own.
  std::optional<int> alias_of;
  // Held outside the arena (external constants or inputs): no arena bytes, no offset.
  bool external = false;
};

struct Liveness {
  std::vector<NodeId> schedule;
  std::vector<LiveBuffer> buffers;
  std::vector<KernelContract> contracts;  // per step
  // Per buffer, the buffer owning its memory, kept by compute_liveness so storage_of is
  // O(1) (an in-place chain of 10^5 Relus made the walk quadratic). Empty: walk alias_of.
  std::vector<int> roots;

  int steps() const { return static_cast<int>(schedule.size()); }
  // The buffer that owns the memory of `buffer` (follows alias chains).
  int storage_of(int buffer) const;
  // Per buffer that owns storage, the steps during which it or any of its aliases is
  // live; aliases get their root's interval too.
  std::vector<std::pair<int, int>> storage_intervals() const;
  // The workspace bytes the steps' contracts declare, summed over the steps.
  int64_t declared_workspace_bytes() const;
};

// The graph must verify; the execution order is the graph's own.
Liveness compute_liveness(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options = {});

}  // namespace memledger
