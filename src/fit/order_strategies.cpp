// Fit's strategies that change no MACs (fit/strategy.h): the model's order as it is, a
// memory-aware order, the in-place rules of the kernel contracts, and fused self-gated
// activations.
#include <fmt/format.h>

#include "memledger/fit/fuse_gates.h"
#include "memledger/fit/peak_live.h"
#include "memledger/fit/schedule.h"
#include "strategies.h"

namespace memledger {

std::optional<FitAttempt> run_layer_by_layer(FitState& state) {
  return planned_attempt(state, FitStepKind::kLayerByLayer, "the model's order, no in-place reuse", state.model,
                         {.in_place = false}, 0);
}

std::optional<FitAttempt> run_memory_order(FitState& state) {
  const ScheduleResult schedule = memory_aware_schedule(
      state.result.graph, state.profile,
      {.time_budget_seconds = state.options.schedule_time_budget_seconds, .plan = {.in_place = false}});
  Graph reordered = state.result.graph;
  reordered.set_order(schedule.order);
  return planned_attempt(
      state, FitStepKind::kMemoryOrder,
      fmt::format("{}{}, {} states searched", schedule.method, schedule.optimal ? " (optimal)" : "", schedule.states),
      std::move(reordered), {.in_place = false}, 0);
}

// On the order kept so far, and on an order searched again with them (in-place outputs
// change which order is best); the lower peak wins.
std::optional<FitAttempt> run_in_place(FitState& state) {
  const PlanOptions in_place{.in_place = true};
  Graph g = state.result.graph;
  const ScheduleResult schedule =
      memory_aware_schedule(state.model, state.profile,
                            {.time_budget_seconds = state.options.schedule_time_budget_seconds, .plan = in_place});
  std::string detail = "elementwise chains, depthwise Conv through a one-plane workspace";
  if (schedule.peak_live_bytes < peak_live(g, state.profile, in_place)) {
    g = state.model;
    g.set_order(schedule.order);
    detail += fmt::format("; order searched again with them ({})", schedule.method);
  }
  return planned_attempt(state, FitStepKind::kInPlace, detail, std::move(g), in_place, 0);
}

// The same numbers, no MACs: kept also at an equal peak-live.
std::optional<FitAttempt> run_fused_gates(FitState& state) {
  FusedGates fused = fuse_self_gated(state.result.graph);
  if (fused.fused == 0) return std::nullopt;
  FitAttempt attempt = planned_attempt(
      state, FitStepKind::kFusedGates,
      fmt::format("{} self-gated activations (x · Sigmoid(x), x · HardSigmoid(x)) as one in-place node each",
                  fused.fused),
      std::move(fused.graph), {.in_place = true}, 0);
  attempt.free = true;
  return attempt;
}

}  // namespace memledger
