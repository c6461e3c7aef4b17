// The fit's strategies as a table (issue 34, item 1): each entry a name, a one-line summary,
// what it costs, when it applies (a predicate over the fit so far) and how to run it. The
// driver (fit_model, fit/fit.h) runs the entries in order and keeps or drops each result by
// one rule (keeps_attempt below); the steps it records are the script of what ran, which
// `memledger fit` prints. A new strategy (int8 steps, bank spills) is one more entry of
// fit_strategies(), not a change to the driver.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "memledger/device/profile.h"
#include "memledger/fit/fit.h"
#include "memledger/fit/patch_search.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

// What the strategies read and share: the inputs, the result so far (its steps, and the
// graph and plan kept), and what the patch strategies hand on to the later ones.
struct FitState {
  const Graph& model;
  const DeviceProfile& profile;
  const FitOptions& options;
  FitResult result;
  // The graph the patch strategies start from: the one kept when the first of them ran.
  std::optional<Graph> patch_base;
  // The last single stage a search chose, kept or not: a second stage may start after it
  // even where it alone leaves the peak where it was (after a pool). And when a single-stage
  // search reached nothing, its opener (PatchSearchResult::opener), tried there too.
  std::optional<PatchCandidate> first_found, opener_found;
  // Some stage holds a squeeze-and-excitation pool (computed on first use).
  std::optional<bool> pools_add_stages;

  FitState(const Graph& model, const DeviceProfile& profile, const FitOptions& options);
  // The plan kept so far fits and later steps need not be measured (FitOptions::all_steps).
  // Never before the first step: a default MemoryPlan counts as fitting.
  // With banks a plan that fits by spilling may still be beaten by patches: done once a step
  // fits without slow-bank traffic, once the kept plan fits with patches (later patch
  // strategies add MACs) unless patches are preferred, or at once when the user prefers
  // spills (FitPreference::kSpill).
  bool done() const;
  const Graph& base();  // patch_base, taken from the kept graph on first use
};

// A graph a strategy proposes, planned under the profile.
struct FitCandidate {
  Graph graph;
  PlanOptions plan_options;
  MemoryPlan plan;
  std::optional<FitPatches> patches;
};

// What one run of a strategy produced: the step to record (its figures: peak-live, arena,
// extra MACs, traffic) and the candidate it measured, or none when it found nothing to try
// (the step then carries the kept plan's figures and is never kept).
struct FitAttempt {
  FitStep step;
  std::optional<FitCandidate> candidate;
  bool free = false;  // costs nothing (no MACs, no traffic): kept also when it keeps peak-live
};

struct FitStrategy {
  std::string_view name;     // the entry's name in the table
  std::string_view summary;  // one line: what it changes
  std::string_view cost;     // one line: what it costs besides bytes (MACs, traffic)
  // What the user asked for (a forced patch grid): it runs even once the plan fits and its
  // result is the plan, better or not.
  bool forced = false;
  bool (*applies)(FitState& state);
  // nullopt: nothing to record (e.g. no self-gated activation to fuse).
  std::optional<FitAttempt> (*run)(FitState& state);
};

// The table, in the order the driver runs it: the cheapest changes first.
std::span<const FitStrategy> fit_strategies();

// The one rule: an attempt is kept when it is the first step, when its strategy is forced,
// or when the plan kept so far does not fit and the attempt lowers peak-live (or, costing
// nothing, leaves it where it was). Planned across banks, an attempt that fits is kept over
// a kept plan that does not, and over one that fits when it costs fewer cycles by `prefer`'s
// order (FitPreference).
bool keeps_attempt(const FitResult& so_far, const FitAttempt& attempt, bool forced,
                   FitPreference prefer = FitPreference::kCheapest);
// Whether step a costs less than step b by the preference's order: the cycles, after (for
// kPatches) whether it spills at all or (for kSpill) whether it adds MACs; then peak-live.
bool cheaper_step(const FitStep& a, const FitStep& b, FitPreference prefer);
// Across banks, whether step a is the better plan: one that fits over one that does not, the
// cheaper of two that fit (cheaper_step), the lower peak-live of two that do not.
bool better_banked_step(const FitStep& a, const FitStep& b, FitPreference prefer);

// The candidate `graph` planned under the state's profile and placement, as an attempt of
// `kind` with `detail` and `extra_macs`.
FitAttempt planned_attempt(const FitState& state, FitStepKind kind, std::string detail, Graph graph,
                           const PlanOptions& plan_options, int64_t extra_macs,
                           std::optional<FitPatches> patches = std::nullopt);
// An attempt that found nothing to try: the kept plan's figures, never kept.
FitAttempt nothing_tried(const FitState& state, FitStepKind kind, std::string detail);

}  // namespace memledger
