#include "memledger/plan/memory_plan.h"

#include <algorithm>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/plan/allocate/csv.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "memledger/plan/allocate/resident_first.h"
#include "memledger/plan/allocate/validate.h"

namespace memledger {

MemoryPlan plan_memory(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options,
                       const PlacementOptions& placement) {
  MemoryPlan plan;
  plan.liveness = compute_liveness(graph, profile, options);
  plan.ledger = make_ledger(graph, plan.liveness);
  plan.capacity_bytes = profile.capacity_bytes;

  const auto intervals = plan.liveness.storage_intervals();
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    if (b.alias_of || b.external || b.category == BufferCategory::kPersistent) continue;
    plan.problem.buffers.push_back({.id = b.name,
                                    .size = b.physical_bytes,
                                    .alignment = profile.alignment_bytes,
                                    .lower = intervals[i].first,
                                    .upper = intervals[i].second + 1});
    plan.problem_buffer.push_back(static_cast<int>(i));
  }
  allocate::check_problem(plan.problem);
  // The persistent tail's bytes, each buffer aligned; the head gets the capacity left.
  int64_t tail = 0;
  for (const LiveBuffer& b : plan.liveness.buffers)
    if (!b.alias_of && !b.external && b.category == BufferCategory::kPersistent)
      tail = checked_add(align_up(tail, profile.alignment_bytes, "persistent bytes"), b.physical_bytes,
                         "persistent bytes");
  std::optional<int64_t> head_capacity;
  if (!profile.unlimited()) head_capacity = std::max<int64_t>(profile.capacity_bytes - tail, 0);
  const allocate::Solution solution =
      allocate::resident_first(plan.problem, allocate::plan(plan.problem, placement.algorithm,
                                                            {.time_budget_seconds = placement.time_budget_seconds,
                                                             .capacity = head_capacity,
                                                             .on_progress = placement.on_exact_progress}));
  const auto violation = allocate::find_violation(plan.problem, solution);
  ML_CHECK(!violation, "the {} placement is invalid: {}", solution.algorithm, violation.value_or(""));

  plan.offsets.assign(plan.liveness.buffers.size(), 0);
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i)
    if (plan.liveness.buffers[i].external) plan.offsets[i] = -1;
  for (size_t p = 0; p < plan.problem_buffer.size(); ++p)
    plan.offsets[static_cast<size_t>(plan.problem_buffer[p])] = solution.offsets[p];

  plan.head_bytes = solution.arena_bytes;
  int64_t top = align_up(plan.head_bytes, profile.alignment_bytes, "arena bytes");
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    if (b.alias_of || b.external || b.category != BufferCategory::kPersistent) continue;
    top = align_up(top, profile.alignment_bytes, "arena bytes");
    plan.offsets[i] = top;
    top = checked_add(top, b.physical_bytes, "arena bytes");
  }
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i)
    if (plan.liveness.buffers[i].alias_of)
      plan.offsets[i] = plan.offsets[static_cast<size_t>(plan.liveness.storage_of(static_cast<int>(i)))];
  plan.persistent_bytes = tail == 0 ? 0 : top - plan.head_bytes;
  plan.arena_bytes = tail == 0 ? plan.head_bytes : top;
  const int64_t head_bound = allocate::lower_bound(plan.problem).bytes;
  plan.lower_bound_bytes =
      tail == 0 ? head_bound : checked_add(align_up(head_bound, profile.alignment_bytes, "bound"), tail, "bound");
  plan.optimal = solution.optimal || plan.head_bytes == head_bound;
  plan.algorithm = solution.algorithm;
  plan.fits = profile.unlimited() || plan.arena_bytes <= profile.capacity_bytes;
  return plan;
}

std::string plan_csv(const MemoryPlan& plan) {
  allocate::Solution solution{.arena_bytes = plan.arena_bytes, .algorithm = plan.algorithm, .optimal = plan.optimal};
  for (int b : plan.problem_buffer) solution.offsets.push_back(plan.offsets[static_cast<size_t>(b)]);
  return allocate::format_solution_csv(plan.problem, solution);
}

}  // namespace memledger
