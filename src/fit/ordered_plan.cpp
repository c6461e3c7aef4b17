#include "memledger/fit/ordered_plan.h"

#include "memledger/core/error.h"
#include "memledger/plan/banked_plan.h"

namespace memledger {

OrderedPlan plan_in_order(Graph graph, const DeviceProfile& profile, const PlanOptions& options,
                          const PlacementOptions& placement, const std::optional<ScheduleOptions>& search) {
  OrderedPlan out{.graph = std::move(graph)};
  if (search) {
    ScheduleOptions schedule_options = *search;
    schedule_options.plan = options;
    out.schedule = memory_aware_schedule(out.graph, profile, schedule_options);
    out.graph.set_order(out.schedule->order);
  }
  out.plan = profile.banks.empty() ? plan_memory(out.graph, profile, options, placement)
                                   : plan_memory_banked(out.graph, profile, options, placement);
  if (out.schedule)
    ML_CHECK(out.plan.ledger.peak_live_bytes == out.schedule->peak_live_bytes,
             "the schedule's peak-live {} B is not the plan's {} B", out.schedule->peak_live_bytes,
             out.plan.ledger.peak_live_bytes);
  return out;
}

}  // namespace memledger
