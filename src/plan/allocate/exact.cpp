#include "memledger/plan/allocate/exact.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <span>
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
#include "memledger/plan/allocate/views.h"
#include "view_readings.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;

// The turns of a decision with slack (see decide): each a step on one view of the problem
// (views.h) with a node limit, all of them in rounds, the limits doubling from round to round. A
// turn that finds nothing proves nothing, save the decision search on the problem as given,
// where it is complete. A decision search goes on where its restarts stopped in the round before
// (search_progress.h): it searches what one search with the round's limit would, without the
// earlier rounds' nodes again (the fillers' packing, in the first round only, starts afresh).
// Nothing depends on the budget, so a longer budget changes nothing that happens before a shorter
// one would have ended.
enum class Step {
  kSearch,          // the decision search (decision_search.h)
  kFillers,         // a perfect packing with the slack as fillers of one shape (slack_fillers.h)
  kHoleChoice,      // the decision search that chooses its holes among candidates
  kEdgeHoleChoice,  // the same on the view with the holes its buffers' edges give as buffers
  kEdgeSearch,      // the decision search on the view with its edge holes
  kDeepSearch,      // the same after joining that problem again (holes too) and reading it again
};
struct Turn {
  ViewKind view;
  Step step;
  int variant = 0;    // kFillers: the shape; the edge steps: the reading (view_readings.h)
  int64_t nodes = 0;  // in the first round
  int rounds = 0;     // the rounds it takes part in (0: every round)
};
// The table was read off the slack bench (2026-12-03): every step on every view run alone on the
// instances the first search leaves showed that the view with relays and every stack joined, with
// its edge holes taken, places most of them in hundredths of a second (48 of 68 within 0.01 s on
// seeds 1000-, 150000-, 160000-), where the earlier sequence reached that view's edge holes only
// after its own first search, fillers and hole choice; the rest of the table is in the order of
// what each turn placed that those before it did not, side by side on seventeen blocks of the
// bench (150000-210000, 250000-340000: 672 / 680 placed within 2 s against 666 / 680). Turns that
// placed nothing after the first round (of 909 placements on 23 blocks, all but 7 came in it) take
// part in one to three rounds only, so the later rounds are cheaper and reach further for the
// turns that keep doubling (871 / 880 against 870 on 22 blocks). A turn whose reading takes the
// same edge holes as an earlier turn's of its view and step is left out.
constexpr Turn kTurns[] = {
    {ViewKind::kAsGiven, Step::kSearch, 0, 100'000},  // places most problems at once
    {ViewKind::kEveryStack, Step::kEdgeSearch, 1, 20'000},
    {ViewKind::kEveryStack, Step::kEdgeHoleChoice, 1, 20'000},
    {ViewKind::kEveryStack, Step::kEdgeHoleChoice, 0, 20'000},
    {ViewKind::kAsGiven, Step::kEdgeHoleChoice, 1, 20'000, 2},
    {ViewKind::kEveryStack, Step::kSearch, 0, 50'000, 3},
    {ViewKind::kReversedEveryStack, Step::kSearch, 0, 50'000, 3},
    {ViewKind::kStacksOfTwo, Step::kSearch, 0, 30'000, 2},
    {ViewKind::kEveryStack, Step::kHoleChoice, 0, 20'000, 2},
    {ViewKind::kAsGiven, Step::kHoleChoice, 0, 20'000, 2},
    {ViewKind::kStacksOfTwo, Step::kEdgeHoleChoice, 1, 20'000, 2},
    {ViewKind::kReversedEveryStack, Step::kEdgeHoleChoice, 0, 20'000, 2},
    {ViewKind::kReversedEveryStack, Step::kDeepSearch, 0, 50'000},  // guillotine 280019
    {ViewKind::kEveryStack, Step::kDeepSearch, 1, 50'000, 2},
    {ViewKind::kReversedEveryStack, Step::kEdgeHoleChoice, 1, 30'000},  // brick 290009
    {ViewKind::kEveryStack, Step::kEdgeSearch, 0, 50'000},              // brick 320009 (at 9 s)
    {ViewKind::kAsGiven, Step::kFillers, 0, 60'000, 1},                 // the sweep's fillers
};
// Without a complete decision search (alignments that do not divide the sizes): each filler
// packing gets this many nodes, then the offset-order search each joined view a share of the time
// left.
constexpr int64_t kFillerNodes = 60'000;
constexpr int kJoinedShare = 4;
// A joined view of a tight problem gets at most this many nodes of the perfect packing (about
// 0.3 s): with stacks, where a pair lies apart in every placement, the packing of the view can
// search long without a proof, and the next view would have placed the cut at once (tight
// guillotine 5017: 3.25 s with stacks first, 337 nodes with relays alone). Where a view placed a
// tight cut of the hard bench's 160, it took at most 150 000.
constexpr int64_t kJoinedTightNodes = 1'000'000;

Clock::time_point deadline_after(Clock::time_point now, double seconds) {
  const double capped = std::clamp(seconds, 0.0, 1e6);
  return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped));
}

bool is_joined(ViewKind kind) { return kind != ViewKind::kAsGiven; }
bool reads_edges(Step step) {
  return step == Step::kEdgeHoleChoice || step == Step::kEdgeSearch || step == Step::kDeepSearch;
}

// `nodes` doubled `round` times, at most the largest int64.
int64_t doubled(int64_t nodes, int round) {
  for (int r = 0; r < round; ++r)
    nodes = nodes > std::numeric_limits<int64_t>::max() / 2 ? std::numeric_limits<int64_t>::max() : nodes * 2;
  return nodes;
}

// What one decision has found so far, and how it takes a placement of a view.
class Decision {
 public:
  Decision(const Problem& problem, int64_t capacity, const std::function<void(int64_t)>& on_tick)
      : problem_(problem), capacity_(capacity), on_tick_(on_tick) {}

  // What a search that starts now reports to on_tick.
  std::function<void(int64_t)> ticks() const {
    return [this, before = result.nodes](int64_t nodes) {
      if (on_tick_) on_tick_(before + nodes);
    };
  }
  template <class SearchResult>
  void count(const SearchResult& searched) {
    result.nodes += searched.nodes;
    result.restarts += searched.restarts;
  }
  // Takes the offsets of a placement of the view's buffers (holes after them are dropped) when
  // they map to a placement of the problem within the capacity.
  bool take(const Blocks& view, std::vector<int64_t> offsets) {
    offsets.resize(view.joined.buffers.size());
    Solution placed{.offsets = block_offsets(view, offsets)};
    placed.arena_bytes = arena_bytes(problem_, placed.offsets);
    if (placed.arena_bytes > capacity_ || find_violation(problem_, placed)) return false;
    result.outcome = DecisionResult::Outcome::kFound;
    result.solution = std::move(placed);
    return true;
  }
  PlacementDecision result;

 private:
  const Problem& problem_;
  int64_t capacity_;
  const std::function<void(int64_t)>& on_tick_;
};

// The problem at a capacity that leaves no slack: each forward joined view (stacks.h) first, with
// at most kJoinedTightNodes of the perfect packing (where buffers hand their bytes on or lie one
// on another, one offset for the block takes most of the search away: tight guillotine cuts the
// search was slow on place in hundredths of a second), then the perfect packing of the problem.
// True when that decided (a placement, or a proof that there is none).
bool pack_tight(Decision& d, const Problem& problem, int64_t capacity, Clock::time_point deadline,
                std::span<const View> views) {
  for (const View& view : views) {
    if (!is_joined(view.kind) || view.kind == ViewKind::kReversedEveryStack) continue;
    PerfectPackingResult packing =
        find_perfect_packing(view.blocks.joined, capacity, deadline, d.ticks(), kJoinedTightNodes);
    d.count(packing);
    if (packing.outcome == PerfectPackingResult::Outcome::kFound && d.take(view.blocks, std::move(packing.offsets)))
      return true;
  }
  PerfectPackingResult packing = find_perfect_packing(problem, capacity, deadline, d.ticks());
  d.count(packing);
  switch (packing.outcome) {
    case PerfectPackingResult::Outcome::kFound:
      d.result.outcome = DecisionResult::Outcome::kFound;
      d.result.solution = Solution{.offsets = std::move(packing.offsets)};
      return true;
    case PerfectPackingResult::Outcome::kInfeasible:
      d.result.outcome = DecisionResult::Outcome::kInfeasible;
      return true;
    default:
      return false;
  }
}

// How a turn ended: the decision made, the turn stopped by its node limit or the deadline (a
// later round may go further), or the turn searched out without a placement (no later round will
// find one: the step is deterministic, and a bigger node limit searches the same runs first).
enum class TurnEnd { kDecided, kStopped, kSearchedOut };

// Takes turns in rounds on the views of a problem with slack whose decision search is complete.
class Turns {
 public:
  Turns(Decision& d, int64_t capacity, Clock::time_point deadline, std::span<const View> views)
      : d_(d), capacity_(capacity), deadline_(deadline), views_(views) {
    readings_.reserve(views.size());
    for (const View& view : views) readings_.emplace_back(view.blocks.joined, capacity);
  }

  void run() {
    std::vector<bool> out(std::size(kTurns) * views_.size(), false);  // per turn and view: searched out
    for (int round = 0; Clock::now() < deadline_; ++round) {
      bool any = false;
      for (size_t t = 0; t < std::size(kTurns); ++t) {
        const Turn& turn = kTurns[t];
        if (turn.rounds > 0 && round >= turn.rounds) continue;
        for (size_t v = 0; v < views_.size(); ++v) {
          if (views_[v].kind != turn.view || out[t * views_.size() + v]) continue;
          if (Clock::now() >= deadline_) return;
          const TurnEnd end =
              repeats_an_earlier_turn(t, v) ? TurnEnd::kSearchedOut : take(t, v, doubled(turn.nodes, round));
          if (end == TurnEnd::kDecided) return;
          out[t * views_.size() + v] = end == TurnEnd::kSearchedOut;
          any = true;
        }
      }
      if (!any) return;  // every turn searched out: nothing more to find
    }
  }

 private:
  // A turn on an edge reading that takes the same holes as a reading an earlier turn of its view
  // and step takes.
  bool repeats_an_earlier_turn(size_t t, size_t v) {
    const Turn& turn = kTurns[t];
    if (!reads_edges(turn.step)) return false;
    ViewReadings& r = readings_[v];
    for (size_t u = 0; u < t; ++u) {
      const Turn& earlier = kTurns[u];
      if (earlier.view == turn.view && earlier.step == turn.step &&
          r.same_edge_as(earlier.variant) == r.same_edge_as(turn.variant))
        return true;
    }
    return false;
  }

  TurnEnd ended(bool placed, bool ended_on_its_own, int64_t nodes_used, int64_t nodes) const {
    if (placed) return TurnEnd::kDecided;
    if (ended_on_its_own || (nodes_used < nodes && Clock::now() < deadline_)) return TurnEnd::kSearchedOut;
    return TurnEnd::kStopped;
  }
  // A decision search on the view (or on a problem with holes after the view's buffers) that
  // went on after `before` nodes of its turn's earlier rounds.
  TurnEnd searched(const Blocks& view, DecisionResult result, int64_t nodes, int64_t before) {
    d_.count(result);
    const bool placed = result.outcome == DecisionResult::Outcome::kFound;
    const bool taken = placed && d_.take(view, std::move(result.offsets));
    return ended(taken, placed || result.outcome == DecisionResult::Outcome::kInfeasible, before + result.nodes, nodes);
  }

  // Turn t on view v with a node limit that counts the turn's earlier rounds: a decision search
  // goes on where the last round's restarts stopped (search_progress.h).
  TurnEnd take(size_t t, size_t v, int64_t nodes) {
    const Turn& turn = kTurns[t];
    const Blocks& view = views_[v].blocks;
    ViewReadings& r = readings_[v];
    SearchProgress* progress = &progress_[t * views_.size() + v];
    const int64_t before = progress->nodes;
    switch (turn.step) {
      case Step::kSearch: {
        DecisionResult result = decide_placement(view.joined, capacity_, deadline_, d_.ticks(), nodes, progress);
        if (result.outcome == DecisionResult::Outcome::kInfeasible && !is_joined(views_[v].kind)) {
          d_.count(result);
          d_.result.outcome = DecisionResult::Outcome::kInfeasible;  // a proof: the problem itself has no placement
          return TurnEnd::kDecided;
        }
        return searched(view, std::move(result), nodes, before);
      }
      case Step::kFillers: {
        const Problem* filled = r.filled(turn.variant);
        if (!filled) return TurnEnd::kSearchedOut;
        PerfectPackingResult packing = find_perfect_packing(*filled, capacity_, deadline_, d_.ticks(), nodes);
        d_.count(packing);
        const bool placed = packing.outcome == PerfectPackingResult::Outcome::kFound;
        return ended(placed && d_.take(view, std::move(packing.offsets)),
                     packing.outcome != PerfectPackingResult::Outcome::kTimeout, packing.nodes, nodes);
      }
      case Step::kHoleChoice:
        return searched(
            view,
            decide_placement_with_holes(view.joined, r.holes(), capacity_, deadline_, d_.ticks(), nodes, progress),
            nodes, before);
      case Step::kEdgeHoleChoice: {
        const EdgeHoles* e = r.edge(turn.variant);
        if (!e) return TurnEnd::kSearchedOut;
        return searched(
            view,
            decide_placement_with_holes(e->problem, e->candidates, capacity_, deadline_, d_.ticks(), nodes, progress),
            nodes, before);
      }
      case Step::kEdgeSearch: {
        const EdgeHoles* e = r.edge(turn.variant);
        if (!e) return TurnEnd::kSearchedOut;
        return searched(view, decide_placement(e->problem, capacity_, deadline_, d_.ticks(), nodes, progress), nodes,
                        before);
      }
      case Step::kDeepSearch: {
        const ViewReadings::Deep* deep = r.deep(turn.variant);
        if (!deep) return TurnEnd::kSearchedOut;
        DecisionResult result = decide_placement(deep->edge.problem, capacity_, deadline_, d_.ticks(), nodes, progress);
        if (result.outcome == DecisionResult::Outcome::kFound) {  // to the edge-hole problem's buffers
          result.offsets.resize(deep->joined.joined.buffers.size());
          result.offsets = block_offsets(deep->joined, result.offsets);
        }
        return searched(view, std::move(result), nodes, before);
      }
    }
    return TurnEnd::kSearchedOut;
  }

  Decision& d_;
  int64_t capacity_;
  Clock::time_point deadline_;
  std::span<const View> views_;
  std::vector<ViewReadings> readings_;  // per view
  std::vector<SearchProgress> progress_ = std::vector<SearchProgress>(std::size(kTurns) * views_.size());
};

// Without a complete decision search (alignments that do not divide the sizes): the filler
// packings of every view, then the offset-order search (complete with any alignment) on each
// joined view with a share of the time left, then on the problem.
void decide_without_complete_search(Decision& d, const Problem& problem, int64_t capacity, Clock::time_point deadline,
                                    std::span<const View> views) {
  for (const View& view : views) {
    ViewReadings readings(view.blocks.joined, capacity);
    for (int shape = 0; shape < ViewReadings::kShapes; ++shape) {
      if (Clock::now() >= deadline) return;
      const Problem* filled = readings.filled(shape);
      if (!filled) continue;
      PerfectPackingResult packing = find_perfect_packing(*filled, capacity, deadline, d.ticks(), kFillerNodes);
      d.count(packing);
      if (packing.outcome == PerfectPackingResult::Outcome::kFound && d.take(view.blocks, std::move(packing.offsets)))
        return;
    }
  }
  for (const View& view : views) {
    if (!is_joined(view.kind)) continue;
    const Clock::time_point now = Clock::now();
    DecisionResult result =
        decide_in_offset_order(view.blocks.joined, capacity, now + (deadline - now) / kJoinedShare, d.ticks());
    d.count(result);
    if (result.outcome == DecisionResult::Outcome::kFound && d.take(view.blocks, std::move(result.offsets))) return;
  }
  DecisionResult result = decide_in_offset_order(problem, capacity, deadline, d.ticks());
  d.count(result);
  d.result.outcome = result.outcome;
  if (result.outcome == DecisionResult::Outcome::kFound)
    d.result.solution = Solution{.offsets = std::move(result.offsets)};
}

// Perfect packing when the capacity leaves no slack; with slack, the turns of kTurns in rounds
// (the decision search with waste, and the steps that guess the holes a placement leaves, on the
// problem and its views), or, where alignments that do not divide the sizes keep the decision
// search from being complete, the filler packings and the offset-order search.
PlacementDecision decide(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                         const std::function<void(int64_t)>& on_tick, std::span<const View> views) {
  Decision d(problem, capacity, on_tick);
  if (is_tight(problem, capacity) && (pack_tight(d, problem, capacity, deadline, views) || Clock::now() >= deadline))
    return std::move(d.result);
  if (decision_search_is_complete(problem)) {
    Turns(d, capacity, deadline, views).run();
  } else {
    decide_without_complete_search(d, problem, capacity, deadline, views);
  }
  return std::move(d.result);
}

}  // namespace

PlacementDecision decide_within(const Problem& problem, int64_t capacity, double time_budget_seconds) {
  if (has_fixed_offsets(problem)) fail("the exact search does not take fixed offsets");
  PlacementDecision decision =
      decide(problem, capacity, deadline_after(Clock::now(), time_budget_seconds), {}, views_of(problem));
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
  const std::vector<View> views = views_of(problem);
  // Decides one capacity before `probe_deadline`; returns whether it was decided.
  auto probe = [&](int64_t capacity, Clock::time_point probe_deadline) {
    ++st.probes;
    PlacementDecision d = decide(problem, capacity, probe_deadline, on_tick, views);
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
