// The whole planning stage: liveness → ledger → placement of every owning buffer into one
// arena, checked by the validator after every plan. Aliases (in-place outputs) share their
// root's offset; external buffers (constants, inputs outside the arena) are not placed.
// Persistent buffers (variables, live for the whole program) are placed as TFLite Micro
// places them: in a tail above the non-persistent head the allocator plans. Since they are
// live at every step this costs nothing: the arena is the head's plus their bytes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memledger/plan/allocate/planner.h"
#include "memledger/plan/ledger.h"
#include "memledger/plan/liveness.h"
#include "memledger/plan/schedule.h"

namespace memledger {

struct PlacementOptions {
  allocate::Algorithm algorithm = allocate::Algorithm::kExact;
  double time_budget_seconds = 2.0;
  std::function<void(const allocate::ExactProgress&)> on_exact_progress;  // see ExactOptions::on_progress
};

struct MemoryPlan {
  Liveness liveness;
  Ledger ledger;
  // Per buffer of `liveness`; an alias has its root's offset, an external buffer -1.
  std::vector<int64_t> offsets;
  int64_t arena_bytes = 0;        // head_bytes + persistent_bytes
  int64_t head_bytes = 0;         // the non-persistent head (every buffer but the persistent ones)
  int64_t persistent_bytes = 0;   // the persistent tail, above the head
  int64_t lower_bound_bytes = 0;  // of the whole arena (the head's bound + the tail)
  bool optimal = false;           // arena_bytes is proven minimal
  bool fits = true;               // within the profile's capacity (always, when unlimited)
  int64_t capacity_bytes = 0;     // 0 = unlimited
  std::string algorithm;
  allocate::Problem problem;        // the owning buffers as the allocator saw them
  std::vector<int> problem_buffer;  // buffer index of each problem entry
  // How the execution order was chosen, when a memory-aware schedule was searched (the
  // graph was then reordered to it before planning); nullopt: the model's own order.
  std::optional<ScheduleResult> schedule;
};

MemoryPlan plan_memory(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options = {},
                       const PlacementOptions& placement = {});

}  // namespace memledger
