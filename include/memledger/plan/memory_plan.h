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

#include "memledger/plan/allocate/banked.h"
#include "memledger/plan/allocate/planner.h"
#include "memledger/plan/ledger.h"
#include "memledger/plan/liveness.h"

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
  // Set by plan_memory_banked: then `offsets` are from each buffer's bank base, arena_bytes,
  // lower_bound_bytes and capacity_bytes are sums over the banks, and `problem` is empty.
  std::optional<BankedPlacement> banked;
};

MemoryPlan plan_memory(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options = {},
                       const PlacementOptions& placement = {});

// The placement problem with the planned offsets, in the allocator's CSV form
// (plan/allocate/csv.h; `plan --csv`).
std::string plan_csv(const MemoryPlan& plan);

}  // namespace memledger
