#include "memledger/plan/fit.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <unordered_map>

#include "memledger/core/error.h"
#include "memledger/plan/fuse_gates.h"
#include "memledger/plan/ledger.h"
#include "memledger/plan/liveness.h"
#include "memledger/plan/schedule.h"
#include "patch_search.h"

namespace memledger {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Peak-live alone (liveness and ledger, no placement): the patch search's cheap screen.
int64_t peak_live(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options) {
  return make_ledger(graph, compute_liveness(graph, profile, options)).peak_live_bytes;
}

// Strips per pool pass, from each step's pass and strip.
std::vector<int> strips_per_pass(size_t passes, const std::vector<int>& pass_of_step,
                                 const std::vector<int>& strip_of_step) {
  std::vector<int> strips(passes, 0);
  for (size_t s = 0; s < pass_of_step.size(); ++s)
    if (pass_of_step[s] >= 0)
      strips.at(static_cast<size_t>(pass_of_step[s])) =
          std::max(strips.at(static_cast<size_t>(pass_of_step[s])), strip_of_step[s] + 1);
  return strips;
}

// The fit's record of a first-stage candidate applied to `base`.
FitPatches fit_patches_of(const Graph& base, const PatchCandidate& candidate, const PatchedGraph& patched) {
  FitPatches patches{.spec = candidate.spec,
                     .split = base.value(candidate.spec.split).name,
                     .original_macs = patched.original_macs,
                     .patched_macs = patched.patched_macs,
                     .patch_of_step = patched.patch_of_node,
                     .pool_names = patched.pool_names,
                     .pool_pass_of_step = patched.pool_pass_of_node,
                     .pool_strip_of_step = patched.pool_strip_of_node};
  patches.pool_strips =
      strips_per_pass(patches.pool_names.size(), patches.pool_pass_of_step, patches.pool_strip_of_step);
  patches.spec.rows = patched.rows;
  patches.spec.cols = patched.cols;
  if (candidate.inner) {
    patches.inner_spec = candidate.inner;
    patches.inner_split = base.value(candidate.inner->split).name;
    patches.inner_patch_of_step = patched.inner_patch_of_node;
  }
  return patches;
}

// `first`'s patches with a second stage `second` applied to its graph: the first stage's
// patches carried by node onto the new order (its nodes keep their ids).
FitPatches with_second_stage(const Graph& first, const FitPatches& first_patches, const PatchCandidate& second,
                             const PatchedGraph& patched) {
  struct Tags {
    int patch = -1, inner = -1, pass = -1, strip = -1;
  };
  std::unordered_map<NodeId, Tags> first_of;
  for (size_t i = 0; i < first.order().size(); ++i)
    first_of[first.order()[i]] = {first_patches.patch_of_step[i],
                                  first_patches.inner_spec ? first_patches.inner_patch_of_step[i] : -1,
                                  first_patches.pool_pass_of_step[i], first_patches.pool_strip_of_step[i]};
  FitPatches patches = first_patches;
  patches.patch_of_step.clear();
  patches.inner_patch_of_step.clear();
  patches.pool_pass_of_step.clear();
  patches.pool_strip_of_step.clear();
  const int first_passes = static_cast<int>(first_patches.pool_names.size());
  for (size_t i = 0; i < patched.graph.order().size(); ++i) {
    const auto it = first_of.find(patched.graph.order()[i]);
    const Tags t = it == first_of.end() ? Tags{} : it->second;
    patches.patch_of_step.push_back(t.patch);
    if (first_patches.inner_spec) patches.inner_patch_of_step.push_back(t.inner);
    const int second_pass = patched.pool_pass_of_node[i];
    patches.pool_pass_of_step.push_back(second_pass >= 0 ? first_passes + second_pass : t.pass);
    patches.pool_strip_of_step.push_back(second_pass >= 0 ? patched.pool_strip_of_node[i] : t.strip);
  }
  patches.pool_names.insert(patches.pool_names.end(), patched.pool_names.begin(), patched.pool_names.end());
  patches.pool_strips =
      strips_per_pass(patches.pool_names.size(), patches.pool_pass_of_step, patches.pool_strip_of_step);
  patches.second_spec = second.spec;
  patches.second_start = first.value(second.spec.after).name;
  patches.second_split = first.value(second.spec.split).name;
  patches.second_patch_of_step = patched.patch_of_node;
  patches.patched_macs += patched.extra_macs();
  return patches;
}

// The step after `after`'s producer where the most bytes are live (in place), or the last step.
int peak_step_after(const Graph& g, const DeviceProfile& profile, ValueId after) {
  const Ledger ledger = make_ledger(g, compute_liveness(g, profile, {.in_place = true}));
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

// The value called `name`, or an invalid id.
ValueId find_value(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.value_count(); ++i)
    if (g.value(ValueId{static_cast<int32_t>(i)}).name == name) return ValueId{static_cast<int32_t>(i)};
  return {};
}

// The value a fit's own record names (its graphs keep every name they were given).
ValueId value_named(const Graph& g, const std::string& name) {
  const ValueId id = find_value(g, name);
  ML_CHECK(id.valid(), "no value '{}' in the patched graph", name);
  return id;
}

}  // namespace

std::string_view to_string(FitStepKind kind) {
  switch (kind) {
    case FitStepKind::kLayerByLayer:
      return "layer by layer";
    case FitStepKind::kMemoryOrder:
      return "memory-aware order";
    case FitStepKind::kInPlace:
      return "in-place rules";
    case FitStepKind::kFusedGates:
      return "fused gates";
    case FitStepKind::kPatches:
      return "patches";
    case FitStepKind::kNestedPatches:
      return "patches of patches";
    case FitStepKind::kSecondStage:
      return "second patched stage";
    case FitStepKind::kPooledPatches:
      return "patches through pools";
    case FitStepKind::kPooledSecondStage:
      return "second stage through pools";
  }
  return "?";
}

const FitStep& FitResult::best() const {
  for (auto it = steps.rbegin(); it != steps.rend(); ++it)
    if (it->kept) return *it;
  ML_CHECK(!steps.empty(), "a fit without steps");
  return steps.front();
}

FitResult fit_model(const Graph& graph, const DeviceProfile& profile, const FitOptions& options) {
  if (profile.unlimited())
    fail("device '{}' ({}) has no capacity (capacity_bytes = 0): fit needs a memory to fit into", profile.name,
         profile.source);
  for (const auto& [rows, cols] : options.grids) ML_CHECK(rows >= 1 && cols >= 1, "patch grid {}x{}", rows, cols);
  if (options.inner_patch && !options.patch)
    fail("an inner patch grid ({}x{}) needs the outer grid it runs inside (--patch)", options.inner_patch->rows,
         options.inner_patch->cols);

  FitResult result;
  result.model_macs = graph_macs(graph);
  result.graph = graph;
  result.plan_options = {.in_place = false};
  auto plan_step = [&](FitStepKind kind, std::string detail, const Graph& g, const PlanOptions& plan_options,
                       int64_t extra_macs, Clock::time_point start) {
    MemoryPlan plan = plan_memory(g, profile, plan_options, options.placement);
    FitStep step{.kind = kind,
                 .detail = std::move(detail),
                 .peak_live_bytes = plan.ledger.peak_live_bytes,
                 .arena_bytes = plan.arena_bytes,
                 .extra_macs = extra_macs,
                 .planning_seconds = seconds_since(start),
                 .fits = plan.fits,
                 .kept = false};
    return std::pair{std::move(step), std::move(plan)};
  };
  auto done = [&] { return result.plan.fits && !options.all_steps; };
  // Keeps a step's graph and plan when it lowers peak-live (the first step always; with
  // `free`, a step that costs nothing, when it does not raise it), unless the plan kept so
  // far fits already (with all_steps, later steps are only measured).
  auto consider = [&](std::pair<FitStep, MemoryPlan> step, Graph g, const PlanOptions& plan_options,
                      std::optional<FitPatches> patches, bool free = false) {
    const bool first = result.steps.empty();
    const int64_t peak = step.first.peak_live_bytes, kept_peak = result.plan.ledger.peak_live_bytes;
    if (first || (!result.plan.fits && (peak < kept_peak || (free && peak == kept_peak)))) {
      step.first.kept = true;
      result.graph = std::move(g);
      result.plan = std::move(step.second);
      result.plan_options = plan_options;
      result.patches = std::move(patches);
    }
    result.steps.push_back(std::move(step.first));
  };

  // 1. Layer by layer: the model's order, no in-place reuse.
  {
    const auto start = Clock::now();
    auto step = plan_step(FitStepKind::kLayerByLayer, "the model's order, no in-place reuse", graph,
                          {.in_place = false}, 0, start);
    consider(std::move(step), graph, {.in_place = false}, std::nullopt);
  }

  // 2. A memory-aware order.
  if (!done()) {
    const auto start = Clock::now();
    const ScheduleResult schedule = memory_aware_schedule(
        result.graph, profile,
        {.time_budget_seconds = options.schedule_time_budget_seconds, .plan = {.in_place = false}});
    Graph reordered = result.graph;
    reordered.set_order(schedule.order);
    auto step = plan_step(
        FitStepKind::kMemoryOrder,
        fmt::format("{}{}, {} states searched", schedule.method, schedule.optimal ? " (optimal)" : "", schedule.states),
        reordered, {.in_place = false}, 0, start);
    consider(std::move(step), std::move(reordered), {.in_place = false}, std::nullopt);
  }

  // 3. In-place rules: on the order kept so far, and on an order searched again with them
  // (in-place outputs change which order is best); the lower peak wins.
  if (!done()) {
    const auto start = Clock::now();
    const PlanOptions in_place{.in_place = true};
    Graph g = result.graph;
    const ScheduleResult schedule = memory_aware_schedule(
        graph, profile, {.time_budget_seconds = options.schedule_time_budget_seconds, .plan = in_place});
    std::string detail = "elementwise chains, depthwise Conv through a one-plane workspace";
    if (schedule.peak_live_bytes < peak_live(g, profile, in_place)) {
      g = graph;
      g.set_order(schedule.order);
      detail += fmt::format("; order searched again with them ({})", schedule.method);
    }
    auto step = plan_step(FitStepKind::kInPlace, detail, g, in_place, 0, start);
    consider(std::move(step), std::move(g), in_place, std::nullopt);
  }

  // 3. (cont.) Self-gated activations in one in-place node each: the same numbers, no MACs.
  if (!done()) {
    const auto start = Clock::now();
    FusedGates fused = fuse_self_gated(result.graph);
    if (fused.fused > 0) {
      const PlanOptions in_place{.in_place = true};
      auto step = plan_step(
          FitStepKind::kFusedGates,
          fmt::format("{} self-gated activations (x · Sigmoid(x), x · HardSigmoid(x)) as one in-place node each",
                      fused.fused),
          fused.graph, in_place, 0, start);
      consider(std::move(step), std::move(fused.graph), in_place, std::nullopt, true);
    }
  }

  // 4. Patch-based execution of a leading stage; 5. patches of patches when one grid does
  // not reach the capacity. A forced grid (with or without an inner one) is the plan.
  const Graph base = result.graph;
  // The last single stage a search chose, kept or not: a second stage (step 6) may start
  // after it even where it alone leaves the peak where it was (after a pool). And when a
  // single-stage search reached nothing, the candidate whose own stage stays within the
  // capacity with the lowest peak (PatchSearchResult::opener): step 6 tries it too.
  std::optional<PatchCandidate> first_found, opener_found;
  struct StagePlan {
    Graph graph;
    FitPatches patches;
  };
  auto stage_plan = [&](const PatchCandidate& candidate) {
    PatchedGraph patched = apply_candidate(base, candidate);
    FitPatches patches = fit_patches_of(base, candidate, patched);
    return StagePlan{std::move(patched.graph), std::move(patches)};
  };
  auto patch_step = [&](FitStepKind kind, const PatchCandidate& candidate, std::string detail, Clock::time_point start,
                        bool forced) {
    PatchedGraph patched = apply_candidate(base, candidate);
    FitPatches patches = fit_patches_of(base, candidate, patched);
    if (!candidate.inner) first_found = candidate;
    const PlanOptions in_place{.in_place = true};
    auto step = plan_step(kind, std::move(detail), patched.graph, in_place, patched.extra_macs(), start);
    if (forced) {  // what the user asked for: it is the plan, better or not
      step.first.kept = true;
      result.graph = std::move(patched.graph);
      result.plan = std::move(step.second);
      result.plan_options = in_place;
      result.patches = std::move(patches);
      result.steps.push_back(std::move(step.first));
    } else {
      consider(std::move(step), std::move(patched.graph), in_place, std::move(patches));
    }
  };
  auto searched_step = [&](FitStepKind kind, const PatchSearchResult& search, Clock::time_point start,
                           std::string_view what) {
    if (search.opener && !search.opener->inner) opener_found = search.opener;
    if (!search.chosen) {
      result.steps.push_back(
          {.kind = kind,
           .detail =
               fmt::format("no {} of this model reaches below the plan kept ({} screened{})", what, search.evaluated,
                           search.pruned ? fmt::format(", {} stages skipped: the rest of "
                                                       "the network alone exceeds the capacity",
                                                       search.pruned)
                                         : ""),
           .peak_live_bytes = result.plan.ledger.peak_live_bytes,
           .arena_bytes = result.plan.arena_bytes,
           .planning_seconds = seconds_since(start),
           .fits = result.plan.fits});
      return;
    }
    const std::string detail =
        search.reaches ? fmt::format("{}: {} of {} screened reach the capacity, fewest extra MACs",
                                     candidate_text(*search.chosen, base), search.reaching, search.evaluated)
                       : fmt::format("{}: none of {} screened reaches the capacity, lowest peak",
                                     candidate_text(*search.chosen, base), search.evaluated);
    patch_step(kind, *search.chosen, detail, start, false);
  };

  // Rounds without pools (steps 4–6) and then through them (step 7) search with these.
  FitOptions plain = options;
  plain.pool_passes = false;
  auto first_stage = [&](FitStepKind kind, const FitOptions& opts) {
    const auto start = Clock::now();
    if (patch_split_candidates(base, {}, opts.pool_passes).empty())
      result.steps.push_back({.kind = kind,
                              .detail = "no stage of this model can run patch by patch",
                              .peak_live_bytes = result.plan.ledger.peak_live_bytes,
                              .arena_bytes = result.plan.arena_bytes,
                              .planning_seconds = seconds_since(start),
                              .fits = result.plan.fits});
    else
      searched_step(kind, search_patches(base, profile, opts), start, "patch grid");
  };
  if (options.patch) {
    const PatchCandidate forced{.spec = *options.patch, .inner = options.inner_patch};
    patch_step(options.inner_patch ? FitStepKind::kNestedPatches : FitStepKind::kPatches, forced,
               candidate_text(forced, base) + " (forced)", Clock::now(), true);
  } else {
    if (!done()) first_stage(FitStepKind::kPatches, plain);
    if (!done() && patch_split_candidates(base, {}, false).size() > 1) {
      const auto start = Clock::now();
      searched_step(FitStepKind::kNestedPatches, search_nested_patches(base, profile, plain), start,
                    "grid of patches of patches");
    }
  }
  // 6. A second patched stage around the peak after the first stage. The first stage's split
  // is kept, under its own grid and then (a single grid only) each finer one: once a second
  // stage takes the later peak, the first stage's own patches may be what peaks.
  auto later_stage = [&](FitStepKind kind, const FitOptions& opts) {
    const auto start = Clock::now();
    using First = StagePlan;
    std::vector<First> firsts{result.patches ? First{result.graph, *result.patches} : stage_plan(*first_found)};
    const FitPatches kept = firsts.front().patches;  // a copy: firsts grows below
    if (!kept.inner_spec) {
      const ValueId split = value_named(base, kept.split);
      bool finer = false;
      for (const auto& [rows, cols] : options.grids) {
        if (finer) {
          const PatchCandidate c{
              .spec = {.split = split, .rows = rows, .cols = cols, .pool_rows = kept.spec.pool_rows > 0 ? rows : 0}};
          try {
            firsts.push_back(stage_plan(c));
          } catch (const Error&) {
            break;  // finer than the split's H×W
          }
        }
        finer = finer || (rows == kept.spec.rows && cols == kept.spec.cols);
      }
    }
    if (opener_found) {
      const PatchSpec& o = opener_found->spec;
      if (o.split != kept.spec.split || o.rows != kept.spec.rows || o.cols != kept.spec.cols ||
          o.pool_rows != kept.spec.pool_rows)
        firsts.push_back(stage_plan(*opener_found));
    }
    std::optional<std::pair<FitStep, MemoryPlan>> best;
    Graph best_graph;
    FitPatches best_patches;
    int screened = 0;
    for (const First& first : firsts) {
      const ValueId after = value_named(first.graph, first.patches.split);
      const PatchSearchResult search =
          search_later_stage(first.graph, profile, opts, after, peak_step_after(first.graph, profile, after));
      screened += search.evaluated;
      if (!search.chosen) continue;
      PatchedGraph patched = apply_candidate(first.graph, *search.chosen);
      FitPatches patches = with_second_stage(first.graph, first.patches, *search.chosen, patched);
      const std::string detail = fmt::format(
          "{}; then {}: {}", candidate_text(PatchCandidate{.spec = first.patches.spec}, base),
          candidate_text(*search.chosen, first.graph),
          search.reaches ? fmt::format("{} of {} screened reach the capacity, fewest extra MACs", search.reaching,
                                       search.evaluated)
                         : fmt::format("none of {} screened reaches the capacity, lowest peak", search.evaluated));
      const PlanOptions in_place{.in_place = true};
      auto step = plan_step(kind, detail, patched.graph, in_place, patches.patched_macs - patches.original_macs, start);
      const bool better =
          !best || (step.first.fits && !best->first.fits) ||
          (!step.first.fits && !best->first.fits && step.first.peak_live_bytes < best->first.peak_live_bytes);
      if (better) {
        best = std::move(step);
        best_graph = std::move(patched.graph);
        best_patches = std::move(patches);
      }
      if (best->first.fits) break;  // the coarsest first grid that lets it fit: the fewest extra MACs there
    }
    if (!best) {
      result.steps.push_back({.kind = kind,
                              .detail = fmt::format("no stage between '{}' and the later peak can run patch by patch "
                                                    "({} screened)",
                                                    kept.split, screened),
                              .peak_live_bytes = result.plan.ledger.peak_live_bytes,
                              .arena_bytes = result.plan.arena_bytes,
                              .planning_seconds = seconds_since(start),
                              .fits = result.plan.fits});
    } else {
      best->first.planning_seconds = seconds_since(start);
      consider(std::move(*best), std::move(best_graph), {.in_place = true}, std::move(best_patches));
    }
  };
  const auto has_first = [&] { return result.patches || first_found; };
  if (!done() && has_first() && !options.patch) later_stage(FitStepKind::kSecondStage, plain);
  // 7. Stages through squeeze-and-excitation pools: one stage, then a second one (only when
  // some stage holds a pool: else the searches would screen steps 4 and 6's stages again).
  if (!done() && options.pool_passes && !options.patch &&
      patch_split_candidates(base, {}, true).size() > patch_split_candidates(base, {}, false).size()) {
    first_stage(FitStepKind::kPooledPatches, options);
    if (!done() && has_first()) later_stage(FitStepKind::kPooledSecondStage, options);
  }
  result.fits = result.plan.fits;
  return result;
}

MemoryPlan fit_arena_plan(const FitResult& fit, const DeviceProfile& profile, const PlacementOptions& placement) {
  DeviceProfile model_dtypes = profile;  // as exec's with_model_dtypes: the interpreter computes in them
  model_dtypes.storage.reset();
  return plan_memory(fit.graph, model_dtypes, fit.plan_options, placement);
}

std::vector<std::string> in_place_differences(const MemoryPlan& a, const MemoryPlan& b) {
  auto decisions = [](const MemoryPlan& p) {
    std::map<std::string, std::string> out;  // buffer → the buffer it is in place over, or ""
    for (const LiveBuffer& buffer : p.liveness.buffers)
      out[buffer.name] = buffer.alias_of ? p.liveness.buffers[static_cast<size_t>(*buffer.alias_of)].name : "";
    return out;
  };
  const auto da = decisions(a), db = decisions(b);
  std::vector<std::string> differences;
  auto describe = [](const std::string& over) {
    return over.empty() ? std::string("own storage") : "in place over '" + over + "'";
  };
  for (const auto& [name, over] : da) {
    const auto it = db.find(name);
    if (it == db.end())
      differences.push_back(fmt::format("'{}': only in the first plan", name));
    else if (it->second != over)
      differences.push_back(
          fmt::format("'{}': {} in one, {} in the other", name, describe(over), describe(it->second)));
  }
  for (const auto& [name, over] : db)
    if (!da.count(name)) differences.push_back(fmt::format("'{}': only in the second plan", name));
  return differences;
}

PatchSpec parse_patch_spec(const Graph& graph, const std::string& text) {
  const size_t x = text.find('x'), at = text.find('@');
  auto number = [&](size_t begin, size_t end) {
    int v = 0;
    if (begin >= end || end - begin > 4) return -1;
    for (size_t i = begin; i < end; ++i) {
      if (text[i] < '0' || text[i] > '9') return -1;
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  const int rows = x == std::string::npos ? -1 : number(0, x);
  const int cols = x == std::string::npos || at == std::string::npos || at < x ? -1 : number(x + 1, at);
  if (rows < 1 || cols < 1 || at + 1 >= text.size())
    fail("--patch '{}': expected ROWSxCOLS@VALUE, e.g. 4x4@input.44 (ROWS and COLS from 1 to 9999)", text);
  const std::string name = text.substr(at + 1);
  const ValueId id = find_value(graph, name);
  if (!id.valid()) fail("--patch '{}': the model has no value '{}'", text, name);
  return {.split = id, .rows = rows, .cols = cols};
}

}  // namespace memledger
