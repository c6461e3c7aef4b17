// The whole planning stage: liveness → ledger → placement of every owning buffer into one
// arena, checked by the validator after every plan. Aliases (in-place outputs) share their
// root's offset; external buffers (constants, inputs outside the arena) are not placed.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memledger/plan/allocate/banked.h"
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

// Where each buffer went on a device with [[banks]] (plan/banked_plan.h).
struct BankedPlacement {
  std::vector<MemoryBank> banks;  // the profile's
  std::vector<int> bank_of;       // per buffer of the liveness; -1: outside every bank
  allocate::BankedSolution solution;
};

struct MemoryPlan {
  Liveness liveness;
  Ledger ledger;
  // Per buffer of `liveness`; an alias has its root's offset, an external buffer -1.
  std::vector<int64_t> offsets;
  int64_t arena_bytes = 0;
  int64_t lower_bound_bytes = 0;
  bool optimal = false;        // arena_bytes is proven minimal
  bool fits = true;            // within the profile's capacity (always, when unlimited)
  int64_t capacity_bytes = 0;  // 0 = unlimited
  std::string algorithm;
  allocate::Problem problem;        // the owning buffers as the allocator saw them
  std::vector<int> problem_buffer;  // buffer index of each problem entry
  // How the execution order was chosen, when a memory-aware schedule was searched (the
  // graph was then reordered to it before planning); nullopt: the model's own order.
  std::optional<ScheduleResult> schedule;
  // Set by plan_memory_banked: then `offsets` are from each buffer's bank base, arena_bytes,
  // lower_bound_bytes and capacity_bytes are sums over the banks, and `problem` is empty.
  std::optional<BankedPlacement> banked;
};

MemoryPlan plan_memory(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options = {},
                       const PlacementOptions& placement = {});

}  // namespace memledger
