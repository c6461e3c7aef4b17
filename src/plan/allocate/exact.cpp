#include "memledger/plan/allocate/exact.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <span>
#include <tuple>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/plan/allocate/decision_search.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "memledger/plan/allocate/offset_order_search.h"
#include "memledger/plan/allocate/perfect_packing.h"
#include "memledger/plan/allocate/slack_fillers.h"
#include "memledger/plan/allocate/stacks.h"
#include "memledger/plan/allocate/validate.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;

// What each slack-filler packing gets: at most a tenth of the decision's time left and 60 000
// nodes (a few hundredths of a second; where it found a placement it took at most 55 000 on the
// development seeds).
constexpr int kFillerShare = 10;
constexpr int64_t kFillerNodes = 60'000;
// The filler packings tried in turn after the first short search (slack_fillers.h): the
// sweep (development seeds, 2 s of CPU: 64 / 80 placed against 62 / 80 with the layers
// alone), then the layers (which place a few the sweep does not).
constexpr FillerShape kFillerShapes[] = {{.seed = 1}, {.seed = 0}};
// The first, short decision search (a few hundredths of a second).
constexpr int64_t kFirstNodes = 100'000;
// The search that chooses its holes among candidates (slack_fillers.h), after the fillers: at
// most this many nodes (0.03–0.1 s since the search's cost per node fell, 2026-12-02: three times
// as many were neutral) and a tenth of the time left. Since 2026-12-03 it is the decision search
// with hole candidates (decision_search.h), which bears more wrong candidates than the perfect
// packing with them did (held-out seeds 150000-210000: 248 / 280 placed against 245 / 280).
constexpr int64_t kHoleNodes = 200'000;
// Rounds of edge holes (slack_fillers.h) before the packing that chooses the rest. The decision
// search on the problem with them gets at most kReducedNodes (about 0.3–0.5 s; where it placed
// an instance it took up to 2.1 M, mostly under 1 M) and half of the time left: without the
// node limit it delayed the placements the long run finds early past 2 s (guillotine 40004,
// 120015); with it, no instance of five blocks was lost.
constexpr int kEdgeRounds = 3;
constexpr int kReducedShare = 2;
constexpr int64_t kReducedNodes = 1'000'000;
// The edge holes are read twice where the readings differ: with the candidates read at one
// edge only taken as they come, then with those left out whose height another candidate
// reads at that edge too (an open end where a chain may be: brick 1007 placed, which the
// first reading's holes keep out of reach).
constexpr EdgeReading kEdgeReadings[] = {{}, {.ambiguous_open = false}};
// The share of a decision's time each joined form of the problem gets first (after the short
// search, with slack): an eighth placed as many as a half on the held-out seeds 150000-, and
// lost none of the brick cuts that the problem's own early steps place; since the holes are
// chosen by the decision search with candidates, a quarter places more (2026-12-03, side by
// side, two runs each: 150000-210000 250 / 280 against 247 / 280; on the blocks first used
// then, 220000-240000, 112.5 / 120 against 110 / 120; tight cuts 120 / 120 both).
constexpr int kJoinedShare = 4;
// The joined forms (stacks.h), each tried in turn with a share: relays and every stack (all the
// buffers that alone share a lifetime) joined in up to kStackRounds turns, then relays and stacks
// of two, then relays alone (each where it joins more than the next). 2026-12-03, side by side
// on the slack bench: relays alone placed 251 / 280 of seeds 150000-210000 and 184 / 200 of the
// held-out 250000-290000; with stacks of two first, 267 and 191 (one, three or eight rounds
// within one instance of each other); with every stack first, 274 and 196.
constexpr int kStackRounds = 3;
// A joined form of a tight problem gets at most this many nodes of the perfect packing (about
// 0.3 s): with stacks, where a pair lies apart in every placement, the packing of the form can
// search its share out without a proof, and the next form would have placed the cut at once
// (tight guillotine 5017: 3.25 s with stacks first, 337 nodes with relays alone). Where a form
// placed a tight cut of the hard bench's 160, it took at most 150 000.
constexpr int64_t kJoinedTightNodes = 1'000'000;

Clock::time_point deadline_after(Clock::time_point now, double seconds) {
  const double capped = std::clamp(seconds, 0.0, 1e6);
  return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped));
}

// Perfect packing when the capacity leaves no slack, a decision search with waste otherwise
// (and when the problem is too large for the perfect-packing search), after a short
// perfect packing with the slack as fillers. Each of `joined_forms` (the problem with some
// buffers joined into blocks, stacks.h) gets an early turn.
PlacementDecision decide(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                         const std::function<void(int64_t)>& on_tick, std::span<const Blocks> joined_forms,
                         int64_t tight_nodes = std::numeric_limits<int64_t>::max()) {
  PlacementDecision decision;
  // What on_tick gets from a search that starts after `before` nodes.
  auto ticks_after = [&](int64_t before) -> std::function<void(int64_t)> {
    return [&on_tick, before](int64_t nodes) {
      if (on_tick) on_tick(before + nodes);
    };
  };
  const bool complete = decision_search_is_complete(problem);
  // A decision search on `searched` (the problem, or the problem with holes added) until `until`.
  auto run_search = [&](const Problem& searched, Clock::time_point until, int64_t max_nodes) {
    const std::function<void(int64_t)> tick = ticks_after(decision.nodes);
    DecisionResult result = complete ? decide_placement(searched, capacity, until, tick, max_nodes)
                                     : decide_in_offset_order(searched, capacity, until, tick);
    decision.nodes += result.nodes;
    decision.restarts += result.restarts;
    return result;
  };
  // Takes the offsets of a placement of the problem's buffers (holes after them are dropped)
  // when it is one within the capacity.
  auto take = [&](std::vector<int64_t> offsets) {
    offsets.resize(problem.buffers.size());
    Solution placed{.offsets = std::move(offsets)};
    placed.arena_bytes = arena_bytes(problem, placed.offsets);
    if (placed.arena_bytes > capacity || find_violation(problem, placed)) return false;
    decision.outcome = DecisionResult::Outcome::kFound;
    decision.solution = std::move(placed);
    return true;
  };
  // The decision search on the problem itself: its outcome is the decision's.
  auto search = [&](int64_t max_nodes) {
    DecisionResult result = run_search(problem, deadline, max_nodes);
    decision.outcome = result.outcome;
    if (result.outcome == DecisionResult::Outcome::kFound)
      decision.solution = Solution{.offsets = std::move(result.offsets)};
    return result.outcome != DecisionResult::Outcome::kUnknown;
  };
  // The decision search that chooses holes among candidates (no position left empty besides),
  // on a share of the time left; not finding a placement proves nothing.
  auto choose_holes = [&](const Problem& searched, const std::vector<Buffer>& holes, int64_t max_nodes) {
    const Clock::time_point now = Clock::now();
    DecisionResult chosen = decide_placement_with_holes(
        searched, holes, capacity, now + (deadline - now) / kFillerShare, ticks_after(decision.nodes), max_nodes);
    decision.nodes += chosen.nodes;
    decision.restarts += chosen.restarts;
    return chosen.outcome == DecisionResult::Outcome::kFound && take(std::move(chosen.offsets));
  };
  auto accept = [&](PerfectPackingResult& packing) {
    decision.nodes += packing.nodes;
    decision.restarts += packing.restarts;
    return packing.outcome == PerfectPackingResult::Outcome::kFound && take(std::move(packing.offsets));
  };
  // The problem's joined forms (stacks.h), each on a share of the time left: where buffers hand
  // their bytes on or lie one on another, one offset for the block takes most of the search away
  // (tight guillotine cuts the search was slow on place in hundredths of a second). Tried once,
  // before the perfect packing (tight) or after the first short search (with slack); a form
  // without a placement proves nothing.
  size_t joined_next = 0;  // the next of joined_forms to try
  auto joined_places = [&] {
    for (; joined_next < joined_forms.size(); ++joined_next) {
      const Blocks& blocks = joined_forms[joined_next];
      const Clock::time_point now = Clock::now();
      const PlacementDecision joined = decide(blocks.joined, capacity, now + (deadline - now) / kJoinedShare,
                                              ticks_after(decision.nodes), {}, kJoinedTightNodes);
      decision.nodes += joined.nodes;
      decision.restarts += joined.restarts;
      if (joined.solution && take(block_offsets(blocks, joined.solution->offsets))) return true;
    }
    return false;
  };
  if (is_tight(problem, capacity)) {
    if (joined_places()) return decision;
    PerfectPackingResult packing =
        find_perfect_packing(problem, capacity, deadline, ticks_after(decision.nodes), tight_nodes);
    decision.nodes += packing.nodes;
    decision.restarts += packing.restarts;
    switch (packing.outcome) {
      case PerfectPackingResult::Outcome::kFound:
        decision.outcome = DecisionResult::Outcome::kFound;
        decision.solution = Solution{.offsets = std::move(packing.offsets)};
        return decision;
      case PerfectPackingResult::Outcome::kInfeasible:
        decision.outcome = DecisionResult::Outcome::kInfeasible;
        return decision;
      case PerfectPackingResult::Outcome::kTimeout:
        return decision;
      case PerfectPackingResult::Outcome::kNotApplicable:
        break;
    }
  }
  // With slack: a short decision search first (most problems it places at once), then a
  // short perfect packing for each shape of the slack as fillers (slack_fillers.h: it finds some
  // placements at once that the search with waste drowns in; not finding one proves
  // nothing), then a short search that chooses its holes among the rectangles of many such
  // shapes (held-out seeds 60000-: 23 / 40 placed within 2 s against 21 / 40 without it), then
  // the problem with the edge holes taken as buffers (the candidates whose heights the buffers
  // beside their edges give): a short search among the candidates of the slack they leave,
  // then the decision search on it for at most a million nodes and half of the time left
  // (held-out seeds 120000-, 130000-, 140000-: 100 / 120 placed within 2 s against 86 / 120
  // without the two; failing there proves nothing, an edge hole may be wrong),
  // then the decision search on the problem itself with the rest. The well search is the
  // stronger; where alignments keep it from being complete, the offset-order search
  // (complete with any alignment) decides, without the first short run.
  if (complete && search(kFirstNodes)) return decision;
  if (joined_places()) return decision;
  for (const FillerShape& shape : kFillerShapes) {
    if (Clock::now() >= deadline) return decision;
    const std::optional<Problem> filled = with_slack_fillers(problem, capacity, shape);
    if (!filled || !is_tight(*filled, capacity)) continue;
    const Clock::time_point now = Clock::now();
    PerfectPackingResult packing =
        find_perfect_packing(*filled, capacity, now + (deadline - now) / kFillerShare, on_tick, kFillerNodes);
    if (accept(packing)) return decision;
  }
  if (complete && Clock::now() < deadline) {
    const std::vector<Buffer> holes = slack_hole_candidates(problem, capacity);
    if (choose_holes(problem, holes, kHoleNodes)) return decision;
    std::vector<std::tuple<int64_t, int64_t, int64_t>> tried;  // the edge holes of the reading before
    for (const EdgeReading& reading : kEdgeReadings) {
      const EdgeHoles edge = with_edge_holes(problem, capacity, holes, kEdgeRounds, reading);
      std::vector<std::tuple<int64_t, int64_t, int64_t>> taken;
      for (size_t k = problem.buffers.size(); k < edge.problem.buffers.size(); ++k) {
        const Buffer& b = edge.problem.buffers[k];
        taken.emplace_back(b.lower, b.upper, b.size);
      }
      if (taken.empty() || taken == tried) continue;
      tried = std::move(taken);
      if (Clock::now() < deadline && choose_holes(edge.problem, edge.candidates, kHoleNodes)) return decision;
      if (Clock::now() < deadline) {
        const Clock::time_point later = Clock::now();
        DecisionResult reduced = run_search(edge.problem, later + (deadline - later) / kReducedShare, kReducedNodes);
        if (reduced.outcome == DecisionResult::Outcome::kFound && take(std::move(reduced.offsets))) return decision;
      }
    }
  }
  search(std::numeric_limits<int64_t>::max());
  return decision;
}

// The problem's joined forms, each tried only where it joins more than the next: relays and every
// stack, relays and stacks of two, relays alone. They do not depend on the capacity, so a plan
// builds them once for all its decisions.
std::vector<Blocks> joined_forms_of(const Problem& problem) {
  std::vector<Blocks> forms;
  for (Blocks form : {join_relays_and_stacks(problem, kStackRounds, problem.buffers.size()),
                      join_relays_and_stacks(problem, kStackRounds), join_relays_and_stacks(problem, 0)}) {
    if (form.joins > 0 && (forms.empty() || form.joins < forms.back().joins)) forms.push_back(std::move(form));
  }
  return forms;
}

}  // namespace

PlacementDecision decide_within(const Problem& problem, int64_t capacity, double time_budget_seconds) {
  if (has_fixed_offsets(problem)) fail("the exact search does not take fixed offsets");
  PlacementDecision decision =
      decide(problem, capacity, deadline_after(Clock::now(), time_budget_seconds), {}, joined_forms_of(problem));
  if (decision.solution) {
    Solution& s = *decision.solution;
    s.arena_bytes = arena_bytes(problem, s.offsets);
    s.algorithm = "exact";
    s.optimal = s.arena_bytes == lower_bound(problem).bytes;
  }
  return decision;
}

ExactResult plan_exact(const Problem& problem, const ExactOptions& options, const Solution* start) {
  const Clock::time_point begin = Clock::now();
  const Clock::time_point deadline = deadline_after(begin, options.time_budget_seconds);
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - begin).count(); };
  ExactResult result;
  ExactStats& st = result.stats;
  Solution& best = result.solution;
  best = start ? *start : plan_greedy(problem);
  st.greedy_arena = best.arena_bytes;
  st.lower_bound = st.proven_bound = lower_bound(problem).bytes;
  st.best_over_time.push_back({elapsed(), best.arena_bytes, 0});
  auto finish = [&] {
    best.optimal = best.arena_bytes <= st.proven_bound;
    st.seconds = elapsed();
    return result;
  };
  if (best.arena_bytes == st.lower_bound) return finish();
  if (has_fixed_offsets(problem) || static_cast<int64_t>(problem.buffers.size()) > options.max_search_buffers) {
    return finish();
  }
  // No time, no search (a search checks its clock only every so many nodes).
  if (Clock::now() >= deadline) return finish();
  st.searched = true;

  // Every arena below proven_bound is impossible; [low, high] is where a better one may be.
  int64_t low = st.lower_bound;
  int64_t high = best.arena_bytes - 1;
  const std::function<void(int64_t)> on_tick = [&](int64_t nodes) {
    if (!options.on_progress) return;
    options.on_progress({.elapsed_seconds = elapsed(),
                         .budget_seconds = options.time_budget_seconds,
                         .nodes = st.nodes + nodes,
                         .best_arena = best.arena_bytes,
                         .lower_bound = st.proven_bound});
  };
  const std::vector<Blocks> joined_forms = joined_forms_of(problem);
  // Decides one capacity before `probe_deadline`; returns whether it was decided.
  auto probe = [&](int64_t capacity, Clock::time_point probe_deadline) {
    ++st.probes;
    PlacementDecision d = decide(problem, capacity, probe_deadline, on_tick, joined_forms);
    st.nodes += d.nodes;
    st.restarts += d.restarts;
    switch (d.outcome) {
      case DecisionResult::Outcome::kFound:
        best.offsets = std::move(d.solution->offsets);
        best.arena_bytes = arena_bytes(problem, best.offsets);
        best.algorithm = "exact";
        high = best.arena_bytes - 1;
        st.best_over_time.push_back({elapsed(), best.arena_bytes, st.nodes});
        break;
      case DecisionResult::Outcome::kInfeasible:  // then no smaller capacity fits either
        st.proven_bound = std::max(st.proven_bound, capacity + 1);
        low = std::max(low, capacity + 1);
        break;
      case DecisionResult::Outcome::kUnknown:
        st.timed_out = true;
        break;
    }
    on_tick(0);
    return d.outcome != DecisionResult::Outcome::kUnknown;
  };

  // The question asked first: does it fit the capacity? It gets the whole budget.
  if (options.capacity && *options.capacity >= low && *options.capacity <= high) {
    if (!probe(*options.capacity, deadline)) return finish();
  }
  // A tight problem at the lower bound: the perfect-packing search decides it far faster
  // than a binary search would close in, so it gets most of what is left.
  if (low <= high && low == st.lower_bound && is_tight(problem, low)) {
    const Clock::time_point now = Clock::now();
    if (!probe(low, now + (deadline - now) * 9 / 10)) low = low + 1;  // unknown: look higher, where it is easier
  }
  // Then a binary search, each probe taking half of what is left; an undecided probe
  // moves the search up, where decisions are easier.
  while (low <= high) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    const int64_t capacity = low + (high - low) / 2;
    if (!probe(capacity, now + (deadline - now) / 2)) low = capacity + 1;
  }
  return finish();
}

}  // namespace memledger::allocate
