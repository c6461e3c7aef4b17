// The memory ledger (DESIGN.md §4.2, P6, P8): per buffer and per category, logical and
// physical bytes; the live-at-once timeline, per step and category; peak-live, the lower
// bound of any placement. The ledger is made before placement and holds no arena figures:
// the arena and its fragmentation (arena − peak-live) are the MemoryPlan's.
//
// Buffers held outside the arena (external constants and inputs) stay in every total and
// category with their bytes, and are counted again in `external_bytes`; they take no part
// in the timeline or peak-live. Peak-live is also given with and without the graph inputs
// (MCUNetV2's figures leave the input image out): `peak_live_bytes` is the arena's own
// figure, which counts the inputs exactly when they are in the arena.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memledger/plan/liveness.h"

namespace memledger {

struct CategoryTotals {
  int64_t logical_bytes = 0;
  int64_t physical_bytes = 0;  // bytes the buffers own (an in-place alias owns none)
  int64_t external_bytes = 0;  // of physical_bytes, those held outside the arena
  int count = 0;
};

struct TimelineStep {
  int step = 0;
  NodeId node;
  std::string node_name;
  int64_t live_bytes = 0;  // arena storage in use at this step, aliases counted once
  // live_bytes by the category of the buffer that owns the storage (an in-place output's
  // bytes are its root's); categories with no bytes live are left out.
  std::map<BufferCategory, int64_t> live_by_category;
  // The arena's buffers by change, so the timeline stays linear in size (a step does not
  // list all that is live: 20,000 graph outputs would make that 2·10^8 entries). The live
  // set of step s is every `starts` of steps ≤ s less every `ends` of steps < s;
  // live_buffers_at() gives it for one step.
  int live_count = 0;       // arena buffers live at this step
  std::vector<int> starts;  // buffer indices whose first step this is, largest first
  std::vector<int> ends;    // buffer indices whose last step this is, largest first
};

struct Ledger {
  int64_t logical_bytes = 0;   // every buffer's values with no padding
  int64_t physical_bytes = 0;  // every buffer's bytes under the layout contract
  int64_t external_bytes = 0;  // of physical_bytes, those held outside the arena
  std::map<BufferCategory, CategoryTotals> by_category;
  std::vector<TimelineStep> timeline;
  int64_t peak_live_bytes = 0;  // the arena's: external buffers not counted
  int peak_step = 0;
  // Arena storage live at every step (resident weights, say), by the owner's category:
  // part of every step's live_by_category. Empty for a graph without steps.
  std::map<BufferCategory, int64_t> whole_program_by_category;
  // The graph inputs are in the arena, so peak_live_bytes counts them.
  bool inputs_in_arena = true;
  // Peak-live of the arena's buffers plus every graph input (in the arena or not), and
  // without any graph input; one of them equals peak_live_bytes.
  int64_t peak_live_with_inputs_bytes = 0;
  int64_t peak_live_without_inputs_bytes = 0;
};

Ledger make_ledger(const Graph& graph, const Liveness& liveness);

// The arena's buffers live at `step`, largest first (ties in buffer order): O(buffers).
// Inline: diff reads it with no other part of plan/ linked (the fuzz target's build).
inline std::vector<int> live_buffers_at(const Liveness& liveness, int step) {
  std::vector<int> found;
  for (size_t i = 0; i < liveness.buffers.size(); ++i) {
    const LiveBuffer& b = liveness.buffers[i];
    if (!b.external && b.first_step <= step && step <= b.last_step) found.push_back(static_cast<int>(i));
  }
  std::stable_sort(found.begin(), found.end(), [&](int a, int b) {
    return liveness.buffers[static_cast<size_t>(a)].physical_bytes >
           liveness.buffers[static_cast<size_t>(b)].physical_bytes;
  });
  return found;
}

}  // namespace memledger
