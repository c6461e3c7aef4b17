#include "memledger/fit/strategy.h"

#include <array>
#include <tuple>

#include "memledger/plan/banked_plan.h"

#include "strategies.h"

namespace memledger {
namespace {

bool always(FitState&) { return true; }

// Steps 1–3 change no MACs; 4–7 run stages patch by patch (fit/fit.h's list).
constexpr std::array kStrategies{
    FitStrategy{.name = "layer_by_layer",
                .summary = "the model's order, no in-place reuse: the baseline",
                .cost = "nothing",
                .applies = always,
                .run = run_layer_by_layer},
    FitStrategy{.name = "memory_order",
                .summary = "a topological order of least peak-live (fit/schedule.h)",
                .cost = "nothing: the same nodes in another order",
                .applies = always,
                .run = run_memory_order},
    FitStrategy{.name = "in_place",
                .summary = "the kernel contracts' in-place rules, on the kept order and on one searched with them",
                .cost = "nothing",
                .applies = always,
                .run = run_in_place},
    FitStrategy{.name = "fused_gates",
                .summary = "self-gated activations (x · gate(x)) as one in-place node each (fit/fuse_gates.h)",
                .cost = "nothing: the same numbers, no MACs",
                .applies = always,
                .run = run_fused_gates},
    FitStrategy{.name = "forced_patches",
                .summary = "the patch grid the user gave (and its inner grid), the plan whether better or not",
                .cost = "extra MACs: recomputed halos",
                .forced = true,
                .applies = forced_patches_apply,
                .run = run_forced_patches},
    FitStrategy{.name = "patches",
                .summary = "a leading stage patch by patch: the split and grid with the fewest extra MACs",
                .cost = "extra MACs: recomputed halos",
                .applies = patches_apply,
                .run = run_patches},
    FitStrategy{.name = "nested_patches",
                .summary = "patches of patches: an outer grid over a deep stage, an inner one over its start",
                .cost = "extra MACs: recomputed halos of both grids",
                .applies = nested_patches_apply,
                .run = run_nested_patches},
    FitStrategy{.name = "second_stage",
                .summary = "a second patched stage around the later peak, after the first",
                .cost = "extra MACs: recomputed halos of both stages",
                .applies = second_stage_applies,
                .run = run_second_stage},
    FitStrategy{.name = "pooled_patches",
                .summary = "a stage through squeeze-and-excitation pools, each computed by a pass of row strips",
                .cost = "extra MACs: halos, and the stage up to each pool recomputed by its pass",
                .applies = pooled_patches_apply,
                .run = run_pooled_patches},
    FitStrategy{.name = "pooled_second_stage",
                .summary = "a second stage, the stages through pools",
                .cost = "extra MACs: halos and pool passes of both stages",
                .applies = pooled_second_stage_applies,
                .run = run_pooled_second_stage},
};

}  // namespace

FitState::FitState(const Graph& model_, const DeviceProfile& profile_, const FitOptions& options_)
    : model(model_), profile(profile_), options(options_) {
  result.model_macs = graph_macs(model);
  result.graph = model;
  result.plan_options = {.in_place = false};
}

const Graph& FitState::base() {
  if (!patch_base) patch_base = result.graph;
  return *patch_base;
}

std::span<const FitStrategy> fit_strategies() { return kStrategies; }

bool FitState::done() const {
  if (result.steps.empty() || !result.plan.fits || options.all_steps) return false;
  if (profile.banks.empty() || options.prefer == FitPreference::kSpill) return true;
  // A step that fitted without slow-bank traffic (measured, kept or not): later ones add MACs.
  for (const FitStep& s : result.steps)
    if (s.fits && s.spill_cycles == 0) return true;
  return options.prefer == FitPreference::kCheapest && result.best().extra_macs > 0;
}

bool cheaper_step(const FitStep& a, const FitStep& b, FitPreference prefer) {
  auto key = [prefer](const FitStep& s) {
    const bool shunned = prefer == FitPreference::kPatches ? s.spill_cycles > 0
                         : prefer == FitPreference::kSpill ? s.extra_macs > 0
                                                           : false;
    return std::tuple(shunned, s.cost_cycles, s.peak_live_bytes);
  };
  return key(a) < key(b);
}

bool better_banked_step(const FitStep& a, const FitStep& b, FitPreference prefer) {
  if (a.fits) return !b.fits || cheaper_step(a, b, prefer);
  return !b.fits && a.peak_live_bytes < b.peak_live_bytes;
}

bool keeps_attempt(const FitResult& so_far, const FitAttempt& attempt, bool forced, FitPreference prefer) {
  if (!attempt.candidate) return false;
  if (forced || so_far.steps.empty()) return true;
  const int64_t peak_kept = so_far.plan.ledger.peak_live_bytes;
  if (attempt.candidate->plan.banked)
    return better_banked_step(attempt.step, so_far.best(), prefer) ||
           (!so_far.plan.fits && !attempt.step.fits && attempt.free && attempt.step.peak_live_bytes == peak_kept);
  if (so_far.plan.fits) return false;  // one arena: later steps are only measured (FitOptions::all_steps)
  const int64_t peak = attempt.step.peak_live_bytes;
  return peak < peak_kept || (attempt.free && peak == peak_kept);
}

FitAttempt planned_attempt(const FitState& state, FitStepKind kind, std::string detail, Graph graph,
                           const PlanOptions& plan_options, int64_t extra_macs, std::optional<FitPatches> patches) {
  MemoryPlan plan = state.profile.banks.empty()
                        ? plan_memory(graph, state.profile, plan_options, state.options.placement)
                        : plan_memory_banked(graph, state.profile, plan_options, state.options.placement);
  const SlowTraffic slow = slow_bank_traffic(plan);
  FitStep step{.kind = kind,
               .detail = std::move(detail),
               .peak_live_bytes = plan.ledger.peak_live_bytes,
               .arena_bytes = plan.arena_bytes,
               .extra_macs = extra_macs,
               .traffic_bytes = slow.bytes,
               .spill_cycles = slow.cycles,
               .cost_cycles = static_cast<double>(extra_macs) * state.profile.cycles_per_mac + slow.cycles,
               .fits = plan.fits};
  return {.step = std::move(step),
          .candidate = FitCandidate{.graph = std::move(graph),
                                    .plan_options = plan_options,
                                    .plan = std::move(plan),
                                    .patches = std::move(patches)}};
}

FitAttempt nothing_tried(const FitState& state, FitStepKind kind, std::string detail) {
  const MemoryPlan& kept = state.result.plan;
  const FitStep* best = state.result.steps.empty() ? nullptr : &state.result.best();
  return {.step = {.kind = kind,
                   .detail = std::move(detail),
                   .peak_live_bytes = kept.ledger.peak_live_bytes,
                   .arena_bytes = kept.arena_bytes,
                   .traffic_bytes = best ? best->traffic_bytes : 0,
                   .spill_cycles = best ? best->spill_cycles : 0,
                   .cost_cycles = best ? best->cost_cycles : 0,
                   .fits = kept.fits}};
}

}  // namespace memledger
