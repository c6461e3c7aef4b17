#include "memledger/fit/patch_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/fit/peak_live.h"

namespace memledger {
namespace {

const PlanOptions kInPlace{.in_place = true};

// The fewest extra MACs first; the first few are placed (placement may leave fragmentation
// above peak-live) and the first whose arena fits wins, else the first.
void choose(PatchSearchResult& result, std::vector<PatchCandidate> reaching, std::optional<PatchCandidate> lowest,
            const Graph& base, const DeviceProfile& profile, const FitOptions& options) {
  std::stable_sort(reaching.begin(), reaching.end(), [](const PatchCandidate& a, const PatchCandidate& b) {
    return a.extra_macs != b.extra_macs ? a.extra_macs < b.extra_macs : a.peak_live_bytes < b.peak_live_bytes;
  });
  result.reaching = static_cast<int>(reaching.size());
  result.reaches = !reaching.empty();
  constexpr size_t kPlaced = 4;
  for (size_t i = 0; i < std::min(reaching.size(), kPlaced) && !result.chosen; ++i) {
    const PatchedGraph patched = apply_candidate(base, reaching[i]);
    if (plan_memory(patched.graph, profile, kInPlace, options.placement).fits) result.chosen = reaching[i];
  }
  if (!result.chosen && !reaching.empty()) result.chosen = reaching.front();
  if (!result.chosen) result.chosen = lowest;
  if (result.reaches) result.opener.reset();
}

// Peak-live at the steps outside the patched stage: no inner grid can bring the plan below it.
int64_t rest_of_network_peak(const PatchedGraph& patched, const DeviceProfile& profile) {
  const Ledger ledger = screening_ledger(patched.graph, profile, kInPlace);
  int64_t rest = 0;
  for (size_t t = 0; t < ledger.timeline.size() && t < patched.patch_of_node.size(); ++t)
    if (!patched.in_stage(t)) rest = std::max(rest, ledger.timeline[t].live_bytes);
  return rest;
}

// Peak-live of the patched graph, overall and at the steps inside its stage.
std::pair<int64_t, int64_t> peaks(const PatchedGraph& patched, const DeviceProfile& profile) {
  const Ledger ledger = screening_ledger(patched.graph, profile, kInPlace);
  int64_t stage = 0;
  for (size_t t = 0; t < ledger.timeline.size() && t < patched.patch_of_node.size(); ++t)
    if (patched.in_stage(t)) stage = std::max(stage, ledger.timeline[t].live_bytes);
  return {ledger.peak_live_bytes, stage};
}

void consider_opener(std::optional<PatchCandidate>& opener, const PatchCandidate& c, const DeviceProfile& profile) {
  if (c.stage_peak_bytes > profile.capacity_bytes) return;
  if (!opener || c.peak_live_bytes < opener->peak_live_bytes ||
      (c.peak_live_bytes == opener->peak_live_bytes && c.extra_macs < opener->extra_macs))
    opener = c;
}

// One split (and stage start) under FitOptions::grids, coarsest first, until a grid reaches
// the capacity, a grid does not apply (finer than the split's H×W: finer ones neither) or
// `budget` candidates have been evaluated in all.
void screen_grids(const Graph& base, const DeviceProfile& profile, const FitOptions& options, PatchSpec spec,
                  int budget, PatchSearchResult& result, std::vector<PatchCandidate>& reaching,
                  std::optional<PatchCandidate>& lowest) {
  for (const auto& [rows, cols] : options.grids) {
    if (result.evaluated >= budget) return;
    spec.rows = rows;
    spec.cols = cols;
    spec.pool_rows = 0;
    bool reached = false;
    // A stage through pools: their passes in rows × cols strips (about a patch's elements
    // each) and, when the grid has columns, in `rows` taller strips (less halo recomputed
    // per strip, more bytes live); both are screened, the fewest MACs wins among the reaching.
    for (int variant = 0; variant < 2; ++variant) {
      std::optional<PatchedGraph> patched;
      try {
        patched = apply_patches(base, spec);
      } catch (const Error&) {
        return;
      }
      ++result.evaluated;
      const auto [peak, stage_peak] = peaks(*patched, profile);
      const PatchCandidate c{
          .spec = spec, .peak_live_bytes = peak, .stage_peak_bytes = stage_peak, .extra_macs = patched->extra_macs()};
      if (!lowest || c.peak_live_bytes < lowest->peak_live_bytes) lowest = c;
      consider_opener(result.opener, c, profile);
      if (c.peak_live_bytes <= profile.capacity_bytes) {
        reaching.push_back(c);
        reached = true;
      }
      if (patched->pool_names.empty() || cols == 1 || result.evaluated >= budget) break;
      spec.pool_rows = rows;
    }
    if (reached) return;
  }
}

}  // namespace

PatchedGraph apply_candidate(const Graph& base, const PatchCandidate& candidate) {
  return candidate.inner ? apply_nested_patches(base, candidate.spec, *candidate.inner)
                         : apply_patches(base, candidate.spec);
}

std::string candidate_text(const PatchCandidate& candidate, const Graph& base) {
  std::string text = fmt::format("{}x{} patches up to '{}'", candidate.spec.rows, candidate.spec.cols,
                                 base.value(candidate.spec.split).name);
  if (candidate.spec.after.valid()) text += fmt::format(" from '{}'", base.value(candidate.spec.after).name);
  if (candidate.spec.pool_rows > 0) text += fmt::format(", pools in {} row strips", candidate.spec.pool_rows);
  if (candidate.inner)
    text += fmt::format(", in each {}x{} patches up to '{}'", candidate.inner->rows, candidate.inner->cols,
                        base.value(candidate.inner->split).name);
  return text;
}

PatchSearchResult search_patches(const Graph& base, const DeviceProfile& profile, const FitOptions& options,
                                 ValueId after) {
  // Of every split and grid whose peak-live reaches the capacity, the fewest extra MACs; per
  // split, grids grow until one does (a finer grid only recomputes more halo).
  PatchSearchResult result;
  std::vector<PatchCandidate> reaching;
  std::optional<PatchCandidate> lowest;
  for (ValueId split : patch_split_candidates(base, after, options.pool_passes)) {
    screen_grids(base, profile, options, {.split = split, .after = after}, std::numeric_limits<int>::max(), result,
                 reaching, lowest);
  }
  choose(result, std::move(reaching), std::move(lowest), base, profile, options);
  return result;
}

PatchSearchResult search_later_stage(const Graph& base, const DeviceProfile& profile, const FitOptions& options,
                                     ValueId first_split, int peak_step) {
  PatchSearchResult result;
  std::vector<PatchCandidate> reaching;
  std::optional<PatchCandidate> lowest;
  const std::vector<NodeId>& order = base.order();
  if (order.empty()) return result;
  const size_t peak = std::min(static_cast<size_t>(std::max(peak_step, 0)), order.size() - 1);
  std::unordered_map<NodeId, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  const auto first_at = position.find(base.value(first_split).producer);
  if (first_at == position.end() || first_at->second >= peak) return result;
  // Starts: 4-D node outputs from the peak back to the first split, nearest first.
  std::vector<ValueId> starts;
  for (size_t i = peak; i-- > first_at->second && starts.size() < static_cast<size_t>(kLaterStageStarts);) {
    const Node& node = base.node(order[i]);
    if (!node.outputs.empty() && node.outputs[0].valid() && base.value(node.outputs[0]).shape.size() == 4)
      starts.push_back(node.outputs[0]);
  }
  for (ValueId start : starts) {
    if (result.evaluated >= options.nested_evaluations) break;
    for (ValueId split : patch_split_candidates(base, start, options.pool_passes)) {
      if (position.at(base.value(split).producer) < peak) continue;  // the stage must hold the peak step
      screen_grids(base, profile, options, {.split = split, .after = start}, options.nested_evaluations, result,
                   reaching, lowest);
    }
  }
  choose(result, std::move(reaching), std::move(lowest), base, profile, options);
  return result;
}

PatchSearchResult search_nested_patches(const Graph& base, const DeviceProfile& profile, const FitOptions& options) {
  // Per outer split (the stage's end), the rest of the network's peak bounds every nested
  // plan from below: a stage whose rest exceeds the capacity is skipped. Per outer and inner
  // split, the coarsest grids first: their extra MACs bound the pair's from below (finer
  // grids only add halo), so a pair that cannot beat the best reaching candidate so far is
  // skipped. Then the finest grids: when they do not reach the capacity, no coarser pair
  // does (peak-live falls as grids get finer), and the pair is skipped. Otherwise the grids
  // grow from the coarsest, outer grid first, until one reaches it or its extra MACs reach
  // the best so far.
  PatchSearchResult result;
  std::vector<PatchCandidate> reaching;
  std::optional<PatchCandidate> lowest;
  int64_t fewest_reaching_macs = std::numeric_limits<int64_t>::max();
  const std::vector<ValueId> splits = patch_split_candidates(base, {}, options.pool_passes);
  // Screens one candidate; nullopt when its grids do not apply (an Error naming why).
  auto screen = [&](const PatchSpec& outer, const PatchSpec& inner) -> std::optional<PatchCandidate> {
    std::optional<PatchedGraph> patched;
    try {
      patched = apply_nested_patches(base, outer, inner);
    } catch (const Error&) {
      return std::nullopt;
    }
    ++result.evaluated;
    PatchCandidate c{.spec = outer,
                     .inner = inner,
                     .peak_live_bytes = peak_live(patched->graph, profile, kInPlace),
                     .extra_macs = patched->extra_macs()};
    if (!lowest || c.peak_live_bytes < lowest->peak_live_bytes) lowest = c;
    return c;
  };
  auto budget_left = [&] { return result.evaluated < options.nested_evaluations; };
  for (size_t o = 1; o < splits.size() && budget_left(); ++o) {
    // The rest of the network, under the coarsest outer grid that applies.
    bool applies = false;
    for (const auto& [rows, cols] : options.nested_outer_grids) {
      try {
        const PatchedGraph single = apply_patches(base, {.split = splits[o], .rows = rows, .cols = cols});
        applies = true;
        if (rest_of_network_peak(single, profile) > profile.capacity_bytes) {
          ++result.pruned;
          applies = false;
        }
        break;
      } catch (const Error&) {
        continue;
      }
    }
    if (!applies) continue;
    for (size_t i = 0; i < o && budget_left(); ++i) {
      auto outer_at = [&](const std::pair<int, int>& g) {
        return PatchSpec{.split = splits[o], .rows = g.first, .cols = g.second};
      };
      auto inner_at = [&](const std::pair<int, int>& g) {
        return PatchSpec{.split = splits[i], .rows = g.first, .cols = g.second};
      };
      auto record = [&](const PatchCandidate& c) {
        reaching.push_back(c);
        fewest_reaching_macs = std::min(fewest_reaching_macs, c.extra_macs);
      };
      // The coarsest pair: its extra MACs bound the pair's from below (finer grids add halo).
      const auto coarsest =
          screen(outer_at(options.nested_outer_grids.front()), inner_at(options.nested_inner_grids.front()));
      if (!coarsest || coarsest->extra_macs >= fewest_reaching_macs) continue;
      if (coarsest->peak_live_bytes <= profile.capacity_bytes) {
        record(*coarsest);
        continue;
      }
      // The finest pair that applies: if it does not reach the capacity, none does.
      bool any_reaches = false, any_applies = false;
      for (auto ot = options.nested_outer_grids.rbegin(); ot != options.nested_outer_grids.rend() && !any_applies; ++ot)
        for (auto it = options.nested_inner_grids.rbegin(); it != options.nested_inner_grids.rend() && !any_applies;
             ++it)
          if (budget_left())
            if (const auto c = screen(outer_at(*ot), inner_at(*it))) {
              any_applies = true;
              any_reaches = c->peak_live_bytes <= profile.capacity_bytes;
            }
      if (!any_reaches) continue;
      for (size_t og = 0; og < options.nested_outer_grids.size(); ++og) {
        for (size_t ig = og == 0 ? 1 : 0; ig < options.nested_inner_grids.size(); ++ig) {
          if (!budget_left()) break;
          const auto c = screen(outer_at(options.nested_outer_grids[og]), inner_at(options.nested_inner_grids[ig]));
          if (!c) break;  // finer than an outer patch's box of the inner split: finer ones neither
          if (c->extra_macs >= fewest_reaching_macs) break;
          if (c->peak_live_bytes <= profile.capacity_bytes) {
            record(*c);
            break;
          }
        }
      }
    }
  }
  choose(result, std::move(reaching), std::move(lowest), base, profile, options);
  return result;
}

}  // namespace memledger
