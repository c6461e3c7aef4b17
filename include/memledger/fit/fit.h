// Making a model fit its device (issue 13, item 5; DESIGN.md §2 "Fitting"): the cheapest
// changes first, each kept only when it lowers peak-live, until the plan fits the capacity:
//   1. layer by layer: the model's order, no in-place reuse (the baseline);
//   2. a memory-aware topological order (fit/schedule.h);
//   3. the in-place rules of the kernel contracts (elementwise chains, depthwise Conv);
//      then, when the model has them, its self-gated activations (SiLU, hard-swish written
//      as x · gate(x)) fused into one in-place node each (fit/fuse_gates.h: no MACs);
//   4. patch-based execution of a leading stage (fit/patch.h): of every split value and
//      grid whose peak-live reaches the capacity, the one with the fewest extra
//      multiply-accumulates (recomputed halos); when none reaches it, the lowest peak;
//   5. when one grid does not reach the capacity, patches of patches: an outer grid over a
//      deep stage and, inside each outer patch, an inner grid over its high-resolution
//      start (MCUNetV2's receptive-field trade without one fine grid's halo over the whole
//      stage), searched the same way;
//   6. when the plan still does not fit, a second patched stage around the peak step, after
//      the first stage: it starts at a value computed in full (so a squeeze-and-excitation
//      block, which needs its whole input and ends any stage, can lie between the two) and
//      ends at a split after the peak; searched like step 4 over its start and split, after
//      the kept first stage and, when step 4 reached nothing, also after its opener (the
//      lowest-peak stage whose own steps stay within the capacity);
//   7. when it still does not fit, stages through squeeze-and-excitation blocks: steps 4
//      and 6 again with stages that hold global pools, each computed by a pass of row
//      strips before the stage's patches (fit/patch.h). The passes recompute the stage up
//      to their pool, so they come last: a plan that fits without them costs fewer MACs.
// Each step is an entry of a table (fit/strategy.h: name, when it applies, how it runs, what
// it costs); fit_model is the loop that runs them and keeps or drops each result by one rule.
// Nothing changes the model's numbers: the result is a graph (reordered, maybe patched)
// and its plan, which run_in_arena proves bit-identical to the ordinary run. fit_model is
// deterministic (same model, profile and options: same result), so `run --arena --fit`
// recomputes the plan `fit` found.
//
// Limits: patching is searched over the grids in FitOptions::grids (nested: the outer and
// inner grid lists, at most nested_evaluations candidates screened) only; the patched graph
// keeps the order apply_patches gives it (patch by patch), it is not reordered again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memledger/device/profile.h"
#include "memledger/fit/patch.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

// On a device with [[banks]] every candidate is planned across the banks, so a plan may fit by
// spilling buffers to slower banks (slow-bank traffic) where another fits by patches (extra
// MACs). Both are weighed in the device's cycles: extra MACs × cycles_per_mac, and each
// slow-bank byte × its cost above the fastest bank's (plan/banked_plan.h, slow_bank_traffic).
enum class FitPreference {
  kCheapest,  // the fewest cycles of the two
  kPatches,   // a plan without slow-bank traffic wherever one fits, however many MACs it adds
  kSpill,     // the first plan that fits without extra MACs: the patch strategies run only when none does
};
std::string_view to_string(FitPreference preference);
// The preference named by to_string ("cheapest", "patches", "spill"), or none.
std::optional<FitPreference> parse_fit_preference(std::string_view name);

struct FitOptions {
  PlacementOptions placement;
  // Force one patch grid (`--patch RxC@VALUE`) instead of searching; an Error when it cannot
  // apply.
  std::optional<PatchSpec> patch;
  // With `patch`, patches of patches (`--inner-patch RxC@VALUE`): this grid inside each of
  // its patches, over the part of its stage up to VALUE.
  std::optional<PatchSpec> inner_patch;
  // Grids (rows, cols) the patch search tries, cheapest first.
  std::vector<std::pair<int, int>> grids = {{2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {7, 7}, {8, 8}};
  // Patches of patches: outer grids (few patches: the outer stage is deep, its halo grows
  // fast), inner grids (finer, over the shallow high-resolution part), each in increasing
  // fineness; at most this many candidates screened by peak-live.
  std::vector<std::pair<int, int>> nested_outer_grids = {{2, 1}, {1, 2}, {2, 2}, {3, 3}};
  std::vector<std::pair<int, int>> nested_inner_grids = {{2, 2}, {3, 3}, {3, 4}, {4, 4}, {5, 5}, {6, 6}};
  int nested_evaluations = 2000;
  // Step 7: stages may hold squeeze-and-excitation pools (false: every stage ends at one).
  bool pool_passes = true;
  // Measure every step even once the model fits (the benchmark's table) instead of stopping
  // at the first step that fits; the plan stays that first one.
  bool all_steps = false;
  double schedule_time_budget_seconds = 2.0;
  // On a device with banks: which plan that fits wins (`fit --prefer`).
  FitPreference prefer = FitPreference::kCheapest;
};

enum class FitStepKind {
  kLayerByLayer,
  kMemoryOrder,
  kInPlace,
  kFusedGates,  // step 3, when the model has self-gated activations
  kPatches,
  kNestedPatches,
  kSecondStage,
  kPooledPatches,     // step 7: one stage through pools
  kPooledSecondStage  // step 7: a second stage through pools
};
std::string_view to_string(FitStepKind kind);

struct FitStep {
  FitStepKind kind = FitStepKind::kLayerByLayer;
  std::string detail;  // what the step did: the schedule's method, the patch grid and split
  int64_t peak_live_bytes = 0;
  int64_t arena_bytes = 0;
  int64_t extra_macs = 0;  // over the model's own MACs
  // On a device with banks: bytes read and written in banks slower than the fastest one that
  // holds activations (spills), and what they cost beyond it in cycles; 0 without banks.
  int64_t traffic_bytes = 0;
  double spill_cycles = 0;
  // extra_macs × the profile's cycles_per_mac + spill_cycles: what the step's plan costs
  // the device beyond the model's own work. fit weighs steps by it on a device with banks.
  double cost_cycles = 0;
  double planning_seconds = 0;
  bool fits = false;          // arena within the capacity
  bool kept = false;          // it lowered peak-live, so later steps build on it
  std::string_view strategy;  // the entry of fit_strategies() that ran (fit/strategy.h)
};

// The patch structure of the result, per step of the final plan's schedule.
struct FitPatches {
  PatchSpec spec;
  std::string split;  // the split value's name in the original graph
  int64_t original_macs = 0, patched_macs = 0;
  std::vector<int> patch_of_step;  // -1 outside the patched stage
  // Patches of patches: the grid inside each outer patch, its split's name in the original
  // graph, and per step its inner patch (-1 outside one).
  std::optional<PatchSpec> inner_spec;
  std::string inner_split;
  std::vector<int> inner_patch_of_step;
  // A second patched stage (step 6), after the first: its grid, the names of the value it
  // starts at (computed in full before it) and of its split, and per step its patch (-1
  // outside it).
  std::optional<PatchSpec> second_spec;
  std::string second_start, second_split;
  std::vector<int> second_patch_of_step;
  // Squeeze-and-excitation pools inside the stages (step 7): per pool pass, the pooled
  // value's name and its row strips, the first stage's passes first; per step its pass and
  // its strip of that pass (-1 outside one).
  std::vector<std::string> pool_names;
  std::vector<int> pool_strips;
  std::vector<int> pool_pass_of_step, pool_strip_of_step;
};

struct FitResult {
  std::vector<FitStep> steps;
  Graph graph;  // the graph the final plan is of (the model's, reordered or patched)
  PlanOptions plan_options;
  MemoryPlan plan;  // the best plan reached, under the profile
  std::optional<FitPatches> patches;
  int64_t model_macs = 0;
  bool fits = false;
  FitPreference prefer = FitPreference::kCheapest;  // the options' (on a device with banks)

  const FitStep& best() const;  // the last kept step (the one the plan is of)
};

// The profile must have a capacity (an Error naming it otherwise: there is nothing to fit to).
FitResult fit_model(const Graph& graph, const DeviceProfile& profile, const FitOptions& options = {});

// The plan `run --arena --fit` runs: the fit's graph, order, patches and in-place options
// under `profile` with the model's own dtypes (with_model_dtypes), as the interpreter
// computes in them.
MemoryPlan fit_arena_plan(const FitResult& fit, const DeviceProfile& profile, const PlacementOptions& placement = {});

// Buffers whose in-place decision differs between two plans of the same graph (by name:
// "'x': in place over 'y' in one, own storage in the other"); empty when they agree. The
// arena run's plan keeps the model's dtypes, so sizes differ; the decisions should not. Workspaces
// (a kernel's own bytes, declared by the kernel set) are no decision and are left out.
std::vector<std::string> in_place_differences(const MemoryPlan& a, const MemoryPlan& b);

// The PatchSpec of `ROWSxCOLS@VALUE`, VALUE a value of `graph` by name; an Error naming the
// text when it does not parse or the model has no such value (the caller adds where the
// text came from: the command line names its flag).
PatchSpec parse_patch_spec(const Graph& graph, const std::string& text);

}  // namespace memledger
