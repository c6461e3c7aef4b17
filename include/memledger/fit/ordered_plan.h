// A plan in the order asked for (what `plan --schedule` runs): the model's own, or a
// memory-aware order searched first (fit/schedule.h) with the graph reordered to it before
// planning. The plan itself (plan/memory_plan.h) knows nothing of how its order was chosen;
// the reports take the schedule beside it.
#pragma once

#include <optional>

#include "memledger/device/profile.h"
#include "memledger/fit/schedule.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

struct OrderedPlan {
  Graph graph;  // the model, reordered when a schedule was searched
  MemoryPlan plan;
  std::optional<ScheduleResult> schedule;  // nullopt: the model's own order

  const ScheduleResult* schedule_or_null() const { return schedule ? &*schedule : nullptr; }
};

// With `search`, a memory-aware order under `options` (its PlanOptions replaced by `options`)
// is searched and the plan is of it; its peak-live is the plan's (an internal error otherwise).
OrderedPlan plan_in_order(Graph graph, const DeviceProfile& profile, const PlanOptions& options,
                          const PlacementOptions& placement, const std::optional<ScheduleOptions>& search);

}  // namespace memledger
