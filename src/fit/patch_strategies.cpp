// Fit's patch strategies (fit/strategy.h): a forced grid, a searched leading stage, patches
// of patches, a second stage around the later peak, and both again through
// squeeze-and-excitation pools. They cost multiply-accumulates (recomputed halos, pool
// passes), so they come after the strategies that cost none.
#include <fmt/format.h>

#include <algorithm>

#include "fit_patches.h"
#include "memledger/core/error.h"
#include "memledger/fit/peak_live.h"
#include "strategies.h"

namespace memledger {
namespace {

const PlanOptions kInPlace{.in_place = true};

// `candidate` applied to the patch base and planned; a single grid is remembered as the
// stage a second one may follow.
FitAttempt patch_attempt(FitState& state, FitStepKind kind, const PatchCandidate& candidate, std::string detail) {
  const Graph& base = state.base();
  PatchedGraph patched = apply_candidate(base, candidate);
  FitPatches patches = fit_patches_of(base, candidate, patched);
  if (!candidate.inner) state.first_found = candidate;
  const int64_t extra = patched.extra_macs();
  return planned_attempt(state, kind, std::move(detail), std::move(patched.graph), kInPlace, extra, std::move(patches));
}

// The candidate a search chose, or a step that says why there is none.
FitAttempt searched_attempt(FitState& state, FitStepKind kind, const PatchSearchResult& search, std::string_view what) {
  if (search.opener && !search.opener->inner) state.opener_found = search.opener;
  if (!search.chosen)
    return nothing_tried(
        state, kind,
        fmt::format("no {} of this model reaches below the plan kept ({} screened{})", what, search.evaluated,
                    search.pruned ? fmt::format(", {} stages skipped: the rest of "
                                                "the network alone exceeds the capacity",
                                                search.pruned)
                                  : ""));
  const Graph& base = state.base();
  std::string detail = search.reaches
                           ? fmt::format("{}: {} of {} screened reach the capacity, fewest extra MACs",
                                         candidate_text(*search.chosen, base), search.reaching, search.evaluated)
                           : fmt::format("{}: none of {} screened reaches the capacity, lowest peak",
                                         candidate_text(*search.chosen, base), search.evaluated);
  return patch_attempt(state, kind, *search.chosen, std::move(detail));
}

// One stage, searched over every split and grid (with or without pools).
FitAttempt first_stage(FitState& state, FitStepKind kind, const FitOptions& options, const DeviceProfile& target) {
  if (patch_split_candidates(state.base(), {}, options.pool_passes).empty())
    return nothing_tried(state, kind, "no stage of this model can run patch by patch");
  return searched_attempt(state, kind, search_patches(state.base(), target, options), "patch grid");
}

// The step after `after`'s producer where the most bytes are live (in place), or the last step.
int peak_step_after(const Graph& g, const DeviceProfile& profile, ValueId after) {
  const Ledger ledger = screening_ledger(g, profile, kInPlace);
  const auto& order = g.order();
  const auto at = std::find(order.begin(), order.end(), g.value(after).producer);
  int peak = static_cast<int>(order.size()) - 1;
  int64_t most = -1;
  for (size_t t = static_cast<size_t>(at - order.begin()) + 1; t < ledger.timeline.size(); ++t)
    if (ledger.timeline[t].live_bytes > most) {
      most = ledger.timeline[t].live_bytes;
      peak = static_cast<int>(t);
    }
  return peak;
}

// A first stage a second one may follow: its graph and its patches.
struct StagePlan {
  Graph graph;
  FitPatches patches;
};

StagePlan stage_plan(FitState& state, const PatchCandidate& candidate) {
  PatchedGraph patched = apply_candidate(state.base(), candidate);
  FitPatches patches = fit_patches_of(state.base(), candidate, patched);
  return StagePlan{std::move(patched.graph), std::move(patches)};
}

// The first stages a second one is searched after: the kept (or last found) stage, under
// its own grid and then (a single grid only) each finer one — once a second stage takes the
// later peak, the first stage's own patches may be what peaks — and the opener.
std::vector<StagePlan> first_stages(FitState& state) {
  std::vector<StagePlan> firsts;
  if (state.result.patches)
    firsts.push_back({state.result.graph, *state.result.patches});
  else
    firsts.push_back(stage_plan(state, *state.first_found));
  const FitPatches kept = firsts.front().patches;  // a copy: firsts grows below
  if (!kept.inner_spec) {
    const ValueId split = value_named(state.base(), kept.split);
    bool finer = false;
    for (const auto& [rows, cols] : state.options.grids) {
      if (finer) {
        const PatchCandidate c{
            .spec = {.split = split, .rows = rows, .cols = cols, .pool_rows = kept.spec.pool_rows > 0 ? rows : 0}};
        try {
          firsts.push_back(stage_plan(state, c));
        } catch (const Error&) {
          break;  // finer than the split's H×W
        }
      }
      finer = finer || (rows == kept.spec.rows && cols == kept.spec.cols);
    }
  }
  if (state.opener_found) {
    const PatchSpec& o = state.opener_found->spec;
    if (o.split != kept.spec.split || o.rows != kept.spec.rows || o.cols != kept.spec.cols ||
        o.pool_rows != kept.spec.pool_rows)
      firsts.push_back(stage_plan(state, *state.opener_found));
  }
  return firsts;
}

// A second patched stage around the peak after a first stage: of the first stages, the
// coarsest after which it fits, else the lowest peak.
FitAttempt later_stage(FitState& state, FitStepKind kind, const FitOptions& options, const DeviceProfile& target) {
  const std::vector<StagePlan> firsts = first_stages(state);
  std::optional<FitAttempt> best;
  int screened = 0;
  for (const StagePlan& first : firsts) {
    const ValueId after = value_named(first.graph, first.patches.split);
    const PatchSearchResult search =
        search_later_stage(first.graph, target, options, after, peak_step_after(first.graph, state.profile, after));
    screened += search.evaluated;
    if (!search.chosen) continue;
    PatchedGraph patched = apply_candidate(first.graph, *search.chosen);
    FitPatches patches = with_second_stage(first.graph, first.patches, *search.chosen, patched);
    std::string detail = fmt::format(
        "{}; then {}: {}", candidate_text(PatchCandidate{.spec = first.patches.spec}, state.base()),
        candidate_text(*search.chosen, first.graph),
        search.reaches
            ? fmt::format("{} of {} screened reach the capacity, fewest extra MACs", search.reaching, search.evaluated)
            : fmt::format("none of {} screened reaches the capacity, lowest peak", search.evaluated));
    const int64_t extra = patches.patched_macs - patches.original_macs;
    FitAttempt attempt =
        planned_attempt(state, kind, std::move(detail), std::move(patched.graph), kInPlace, extra, std::move(patches));
    const FitStep& s = attempt.step;
    if (!best || (s.fits && !best->step.fits) ||
        (!s.fits && !best->step.fits && s.peak_live_bytes < best->step.peak_live_bytes))
      best = std::move(attempt);
    if (best->step.fits) break;  // the coarsest first grid that lets it fit: the fewest extra MACs there
  }
  if (!best)
    return nothing_tried(state, kind,
                         fmt::format("no stage between '{}' and the later peak can run patch by patch ({} screened)",
                                     firsts.front().patches.split, screened));
  return std::move(*best);
}

// Rounds without pools (steps 4–6) search with these; through them (step 7), with the
// options as given.
FitOptions without_pools(const FitOptions& options) {
  FitOptions plain = options;
  plain.pool_passes = false;
  return plain;
}

bool has_first_stage(const FitState& state) { return state.result.patches || state.first_found; }

// What a patch search aims its peak-live at: the profile's capacity (on a device with banks,
// the fastest bank that holds activations: a plan with no slow-bank traffic) and, with banks
// unless patches are preferred, the largest writable bank that holds activations and all of
// them together, each while the kept plan's peak is above it: plans that fit by spilling,
// with fewer extra MACs. (A peak within the sum may still not place: no buffer spans two
// banks; hence the largest bank too.)
std::vector<DeviceProfile> patch_targets(const FitState& state) {
  std::vector<DeviceProfile> targets{state.profile};
  if (state.profile.banks.empty() || state.options.prefer == FitPreference::kPatches) return targets;
  int64_t writable = 0, largest = 0;
  for (const MemoryBank& b : state.profile.banks)
    if (!b.read_only && (b.holds & kHoldsActivations) != 0) {
      writable += b.capacity_bytes;
      largest = std::max(largest, b.capacity_bytes);
    }
  // A target the kept plan's peak is already within needs no patches (a search would return a
  // stage of no MACs that changes nothing).
  const int64_t kept_peak = state.result.plan.ledger.peak_live_bytes;
  for (int64_t capacity : {largest, writable})
    if (capacity > targets.back().capacity_bytes && capacity < kept_peak) {
      targets.push_back(state.profile);
      targets.back().capacity_bytes = capacity;
    }
  return targets;
}

// The search run once per target (patch_targets), the better attempt kept: one that fits
// over one that does not, then the cheaper by the preference's order, or the lower peak.
template <class Search>
FitAttempt over_targets(FitState& state, Search&& search) {
  std::optional<FitAttempt> best;
  for (const DeviceProfile& target : patch_targets(state)) {
    FitAttempt attempt = search(target);
    const bool better =
        !best || (attempt.candidate && !best->candidate) ||
        (attempt.candidate && best->candidate && better_banked_step(attempt.step, best->step, state.options.prefer));
    if (better) best = std::move(attempt);
  }
  return std::move(*best);
}

// Some stage holds a pool (else the pooled searches would screen the plain ones' stages again).
bool pools_add_stages(FitState& state) {
  if (!state.pools_add_stages)
    state.pools_add_stages =
        patch_split_candidates(state.base(), {}, true).size() > patch_split_candidates(state.base(), {}, false).size();
  return *state.pools_add_stages;
}

}  // namespace

bool forced_patches_apply(FitState& state) { return state.options.patch.has_value(); }
std::optional<FitAttempt> run_forced_patches(FitState& state) {
  const PatchCandidate forced{.spec = *state.options.patch, .inner = state.options.inner_patch};
  return patch_attempt(state, state.options.inner_patch ? FitStepKind::kNestedPatches : FitStepKind::kPatches, forced,
                       candidate_text(forced, state.base()) + " (forced)");
}

bool patches_apply(FitState& state) { return !state.options.patch; }
std::optional<FitAttempt> run_patches(FitState& state) {
  return over_targets(state, [&](const DeviceProfile& target) {
    return first_stage(state, FitStepKind::kPatches, without_pools(state.options), target);
  });
}

bool nested_patches_apply(FitState& state) {
  return !state.options.patch && patch_split_candidates(state.base(), {}, false).size() > 1;
}
std::optional<FitAttempt> run_nested_patches(FitState& state) {
  return over_targets(state, [&](const DeviceProfile& target) {
    return searched_attempt(state, FitStepKind::kNestedPatches,
                            search_nested_patches(state.base(), target, without_pools(state.options)),
                            "grid of patches of patches");
  });
}

bool second_stage_applies(FitState& state) { return !state.options.patch && has_first_stage(state); }
std::optional<FitAttempt> run_second_stage(FitState& state) {
  return over_targets(state, [&](const DeviceProfile& target) {
    return later_stage(state, FitStepKind::kSecondStage, without_pools(state.options), target);
  });
}

bool pooled_patches_apply(FitState& state) {
  return !state.options.patch && state.options.pool_passes && pools_add_stages(state);
}
std::optional<FitAttempt> run_pooled_patches(FitState& state) {
  return over_targets(state, [&](const DeviceProfile& target) {
    return first_stage(state, FitStepKind::kPooledPatches, state.options, target);
  });
}

bool pooled_second_stage_applies(FitState& state) { return pooled_patches_apply(state) && has_first_stage(state); }
std::optional<FitAttempt> run_pooled_second_stage(FitState& state) {
  return over_targets(state, [&](const DeviceProfile& target) {
    return later_stage(state, FitStepKind::kPooledSecondStage, state.options, target);
  });
}

}  // namespace memledger
