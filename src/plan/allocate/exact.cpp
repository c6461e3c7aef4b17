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
#include "memledger/plan/allocate/views.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;

// The turns of a decision with slack (see decide): each a step on one view of the problem
// (views.h) with a node limit, all of them in rounds, the limits doubling from round to round. A
// turn that finds nothing proves nothing, save the decision search on the problem as given,
// where it is complete. Each round repeats the last one's work before going further (at
// most twice the time a turn's own placement takes), and nothing depends on the budget, so a
// longer budget changes nothing that happens before a shorter one would have ended.
enum class Step {
  kSearch,      // the decision search (decision_search.h)
  kFillers,     // a perfect packing with the slack as fillers of one shape (slack_fillers.h)
  kHoles,       // the decision search that chooses its holes among candidates
  kEdgeHoles,   // the same on the view with the holes its buffers' edges give as buffers (one reading)
  kEdgeSearch,  // the decision search on the view with its edge holes
  kDeepSearch,  // the same after joining that problem again (holes too) and taking its edge holes
};
struct Turn {
  ViewKind view;
  Step step;
  int variant = 0;    // kFillers: the shape; kEdgeHoles, kEdgeSearch, kDeepSearch: the reading
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
// part in two or three rounds only, so the later rounds are cheaper and reach further for the
// turns that keep doubling (871 / 880 against 870 on 22 blocks).
constexpr Turn kTurns[] = {
    {ViewKind::kAsGiven, Step::kSearch, 0, 100'000},  // places most problems at once
    {ViewKind::kEveryStack, Step::kEdgeSearch, 1, 20'000},
    {ViewKind::kEveryStack, Step::kEdgeHoles, 1, 20'000},
    {ViewKind::kEveryStack, Step::kEdgeHoles, 0, 20'000},
    {ViewKind::kAsGiven, Step::kEdgeHoles, 1, 20'000, 2},
    {ViewKind::kEveryStack, Step::kSearch, 0, 50'000, 3},
    {ViewKind::kReversedEveryStack, Step::kSearch, 0, 50'000, 3},
    {ViewKind::kStacksOfTwo, Step::kSearch, 0, 30'000, 2},
    {ViewKind::kEveryStack, Step::kHoles, 0, 20'000, 2},
    {ViewKind::kAsGiven, Step::kHoles, 0, 20'000, 2},
    {ViewKind::kStacksOfTwo, Step::kEdgeHoles, 1, 20'000, 2},
    {ViewKind::kReversedEveryStack, Step::kEdgeHoles, 0, 20'000, 2},
    {ViewKind::kReversedEveryStack, Step::kDeepSearch, 0, 50'000},  // guillotine 280019
    {ViewKind::kEveryStack, Step::kDeepSearch, 1, 50'000, 2},
    {ViewKind::kReversedEveryStack, Step::kEdgeHoles, 1, 30'000},  // brick 290009
    {ViewKind::kEveryStack, Step::kEdgeSearch, 0, 50'000},         // brick 320009 (at 9 s)
    {ViewKind::kAsGiven, Step::kFillers, 0, 60'000, 1},
};
// The filler shapes (slack_fillers.h: the sweep, then the layers) and the edge readings (as read,
// then without the candidates read at one open edge only whose height another candidate reads
// there too).
constexpr FillerShape kFillerShapes[] = {{.seed = 1}, {.seed = 0}};
constexpr EdgeReading kEdgeReadings[] = {{}, {.ambiguous_open = false}};
constexpr int kEdgeRounds = 3;            // rounds of edge holes (slack_fillers.h)
constexpr int kStackRounds = 3;           // relays and stacks joined in turns (stacks.h), as in the joined views
constexpr int64_t kFillerNodes = 60'000;  // a filler packing without a complete decision search
// A joined view of a tight problem gets at most this many nodes of the perfect packing (about
// 0.3 s): with stacks, where a pair lies apart in every placement, the packing of the view can
// search its share out without a proof, and the next view would have placed the cut at once
// (tight guillotine 5017: 3.25 s with stacks first, 337 nodes with relays alone). Where a view
// placed a tight cut of the hard bench's 160, it took at most 150 000.
constexpr int64_t kJoinedTightNodes = 1'000'000;
// Without a complete decision search (alignments that do not divide the sizes): each joined view
// gets this share of the time left for the offset-order search.
constexpr int kJoinedShare = 4;

Clock::time_point deadline_after(Clock::time_point now, double seconds) {
  const double capped = std::clamp(seconds, 0.0, 1e6);
  return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped));
}

bool is_joined(ViewKind kind) { return kind != ViewKind::kAsGiven; }

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

// The problem at a capacity that leaves no slack: each joined view (stacks.h) first, with at most
// kJoinedTightNodes of the perfect packing (where buffers hand their bytes on or lie one on
// another, one offset for the block takes most of the search away: tight guillotine cuts the
// search was slow on place in hundredths of a second), then the perfect packing of the problem.
PlacementDecision pack_tight(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                             const std::function<void(int64_t)>& on_tick, std::span<const View> views) {
  Decision d(problem, capacity, on_tick);
  for (const View& view : views) {
    if (!is_joined(view.kind) || view.kind == ViewKind::kReversedEveryStack) continue;
    PerfectPackingResult packing =
        find_perfect_packing(view.blocks.joined, capacity, deadline, d.ticks(), kJoinedTightNodes);
    d.count(packing);
    if (packing.outcome == PerfectPackingResult::Outcome::kFound && d.take(view.blocks, std::move(packing.offsets)))
      return std::move(d.result);
  }
  PerfectPackingResult packing = find_perfect_packing(problem, capacity, deadline, d.ticks());
  d.count(packing);
  switch (packing.outcome) {
    case PerfectPackingResult::Outcome::kFound:
      d.result.outcome = DecisionResult::Outcome::kFound;
      d.result.solution = Solution{.offsets = std::move(packing.offsets)};
      break;
    case PerfectPackingResult::Outcome::kInfeasible:
      d.result.outcome = DecisionResult::Outcome::kInfeasible;
      break;
    default:
      break;
  }
  return std::move(d.result);
}

// What a decision reads from one view at its capacity, each part when a turn first needs it.
struct ViewReadings;
struct ViewReadings {
  bool complete = false;                     // whether the decision search is complete on the view
  std::optional<std::vector<Buffer>> holes;  // slack_hole_candidates
  std::optional<EdgeHoles> edge[std::size(kEdgeReadings)];
  bool edge_repeats[std::size(kEdgeReadings)] = {};  // the reading takes no edge hole, or the same as the one before
  std::optional<std::optional<Problem>> filled[std::size(kFillerShapes)];
  struct Deep {
    Blocks joined;   // the view with its edge holes, joined
    EdgeHoles edge;  // that with its own edge holes
  };
  std::optional<std::optional<Deep>> deep[std::size(kEdgeReadings)];
};

// Perfect packing when the capacity leaves no slack; with slack, the turns of kTurns in rounds
// (the decision search with waste, and the steps that guess the holes a placement leaves, on the
// problem and its views), or, where alignments that do not divide the sizes keep the decision
// search from being complete, the filler packings and the offset-order search.
PlacementDecision decide(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                         const std::function<void(int64_t)>& on_tick, std::span<const View> views) {
  if (is_tight(problem, capacity)) {
    PlacementDecision tight = pack_tight(problem, capacity, deadline, on_tick, views);
    if (tight.outcome != DecisionResult::Outcome::kUnknown || Clock::now() >= deadline) return tight;
  }
  Decision d(problem, capacity, on_tick);
  std::vector<ViewReadings> readings(views.size());
  for (size_t v = 0; v < views.size(); ++v) readings[v].complete = decision_search_is_complete(views[v].blocks.joined);
  const bool complete = readings[0].complete;
  auto filled = [&](size_t v, int shape) -> const std::optional<Problem>& {
    auto& slot = readings[v].filled[shape];
    if (!slot) {
      std::optional<Problem> f = with_slack_fillers(views[v].blocks.joined, capacity, kFillerShapes[shape]);
      if (f && !is_tight(*f, capacity)) f.reset();
      slot = std::move(f);
    }
    return *slot;
  };
  auto holes = [&](size_t v) -> const std::vector<Buffer>& {
    if (!readings[v].holes) readings[v].holes = slack_hole_candidates(views[v].blocks.joined, capacity);
    return *readings[v].holes;
  };
  // The edge holes of every reading (read together, so a reading that takes the same holes as one
  // before it is left out).
  auto edge = [&](size_t v, int reading) -> const EdgeHoles* {
    ViewReadings& r = readings[v];
    if (!r.edge[0]) {
      const size_t own = views[v].blocks.joined.buffers.size();
      auto same = [own](const EdgeHoles& x, const EdgeHoles& y) {
        const std::vector<Buffer>& a = x.problem.buffers;
        const std::vector<Buffer>& b = y.problem.buffers;
        return a.size() == b.size() &&
               std::equal(a.begin() + own, a.end(), b.begin() + own, [](const Buffer& p, const Buffer& q) {
                 return p.lower == q.lower && p.upper == q.upper && p.size == q.size;
               });
      };
      for (size_t k = 0; k < std::size(kEdgeReadings); ++k) {
        r.edge[k] = with_edge_holes(views[v].blocks.joined, capacity, holes(v), kEdgeRounds, kEdgeReadings[k]);
        r.edge_repeats[k] = r.edge[k]->problem.buffers.size() == own;
        for (size_t before = 0; before < k && !r.edge_repeats[k]; ++before)
          r.edge_repeats[k] = same(*r.edge[before], *r.edge[k]);
      }
    }
    return r.edge_repeats[reading] ? nullptr : &*r.edge[reading];
  };
  auto deeper = [&](size_t v, int reading) -> const ViewReadings::Deep* {
    auto& slot = readings[v].deep[reading];
    if (!slot) {
      slot.emplace();
      if (const EdgeHoles* e = edge(v, reading)) {
        Blocks joined = join_relays_and_stacks(e->problem, kStackRounds, e->problem.buffers.size());
        if (joined.joins > 0) {
          // Read again (where the joined problem gives no new edge hole, it is searched as it is).
          EdgeHoles again = with_edge_holes(joined.joined, capacity, slack_hole_candidates(joined.joined, capacity),
                                            kEdgeRounds, kEdgeReadings[reading]);
          *slot = ViewReadings::Deep{std::move(joined), std::move(again)};
        }
      }
    }
    return *slot ? &**slot : nullptr;
  };
  // How a turn ended: the decision made, the turn stopped by its node limit or the deadline (a
  // later round may go further), or the turn searched out without a placement (no later round
  // will find one: the step is deterministic, and a bigger node limit repeats the same search).
  enum class TurnEnd { kDecided, kStopped, kSearchedOut };
  auto ended = [&](bool placed, bool ended_on_its_own, int64_t nodes_used, int64_t nodes) {
    if (placed) return TurnEnd::kDecided;
    if (ended_on_its_own || (nodes_used < nodes && Clock::now() < deadline)) return TurnEnd::kSearchedOut;
    return TurnEnd::kStopped;
  };
  // How a decision search on a view (or on the view with holes after its buffers) ended.
  auto search_ended = [&](const Blocks& blocks, DecisionResult result, int64_t nodes) {
    d.count(result);
    const bool placed = result.outcome == DecisionResult::Outcome::kFound;
    const bool taken = placed && d.take(blocks, std::move(result.offsets));
    return ended(taken, placed || result.outcome == DecisionResult::Outcome::kInfeasible, result.nodes, nodes);
  };
  auto take_turn = [&](size_t v, const Turn& turn, int64_t nodes) {
    const Blocks& view = views[v].blocks;
    const Problem& seen = view.joined;
    switch (turn.step) {
      case Step::kSearch: {
        DecisionResult result = decide_placement(seen, capacity, deadline, d.ticks(), nodes);
        if (result.outcome == DecisionResult::Outcome::kInfeasible && !is_joined(views[v].kind)) {
          d.count(result);
          d.result.outcome = DecisionResult::Outcome::kInfeasible;  // a proof: the view has the problem's placements
          return TurnEnd::kDecided;
        }
        return search_ended(view, std::move(result), nodes);
      }
      case Step::kFillers: {
        const std::optional<Problem>& f = filled(v, turn.variant);
        if (!f) return TurnEnd::kSearchedOut;
        PerfectPackingResult packing = find_perfect_packing(*f, capacity, deadline, d.ticks(), nodes);
        d.count(packing);
        const bool placed = packing.outcome == PerfectPackingResult::Outcome::kFound;
        return ended(placed && d.take(view, std::move(packing.offsets)),
                     placed || packing.outcome != PerfectPackingResult::Outcome::kTimeout, packing.nodes, nodes);
      }
      case Step::kHoles:
        return search_ended(view, decide_placement_with_holes(seen, holes(v), capacity, deadline, d.ticks(), nodes),
                            nodes);
      case Step::kEdgeHoles: {
        const EdgeHoles* e = edge(v, turn.variant);
        if (!e) return TurnEnd::kSearchedOut;
        return search_ended(
            view, decide_placement_with_holes(e->problem, e->candidates, capacity, deadline, d.ticks(), nodes), nodes);
      }
      case Step::kEdgeSearch: {
        const EdgeHoles* e = edge(v, turn.variant);
        if (!e) return TurnEnd::kSearchedOut;
        return search_ended(view, decide_placement(e->problem, capacity, deadline, d.ticks(), nodes), nodes);
      }
      case Step::kDeepSearch: {
        const auto* deep = deeper(v, turn.variant);
        if (!deep) return TurnEnd::kSearchedOut;
        DecisionResult result = decide_placement(deep->edge.problem, capacity, deadline, d.ticks(), nodes);
        if (result.outcome == DecisionResult::Outcome::kFound) {
          result.offsets.resize(deep->joined.joined.buffers.size());
          result.offsets = block_offsets(deep->joined, result.offsets);
        }
        return search_ended(view, std::move(result), nodes);
      }
    }
    return TurnEnd::kSearchedOut;
  };
  if (!complete) {
    // The filler packings of every view, then the offset-order search (complete with any
    // alignment) on each joined view with a share of the time left, then on the problem.
    for (size_t v = 0; v < views.size(); ++v) {
      for (int shape = 0; shape < static_cast<int>(std::size(kFillerShapes)); ++shape) {
        if (Clock::now() >= deadline) return std::move(d.result);
        if (take_turn(v, {views[v].kind, Step::kFillers, shape}, kFillerNodes) == TurnEnd::kDecided)
          return std::move(d.result);
      }
    }
    for (size_t v = 0; v < views.size(); ++v) {
      if (!is_joined(views[v].kind)) continue;
      const Clock::time_point now = Clock::now();
      const DecisionResult result =
          decide_in_offset_order(views[v].blocks.joined, capacity, now + (deadline - now) / kJoinedShare, d.ticks());
      if (search_ended(views[v].blocks, result, std::numeric_limits<int64_t>::max()) == TurnEnd::kDecided)
        return std::move(d.result);
    }
    DecisionResult searched = decide_in_offset_order(problem, capacity, deadline, d.ticks());
    d.count(searched);
    d.result.outcome = searched.outcome;
    if (searched.outcome == DecisionResult::Outcome::kFound)
      d.result.solution = Solution{.offsets = std::move(searched.offsets)};
    return std::move(d.result);
  }
  std::vector<bool> searched_out(std::size(kTurns) * views.size(), false);  // per turn and view
  for (int round = 0; Clock::now() < deadline; ++round) {
    bool any = false;
    for (size_t t = 0; t < std::size(kTurns); ++t) {
      const Turn& turn = kTurns[t];
      if (turn.rounds > 0 && round >= turn.rounds) continue;
      for (size_t v = 0; v < views.size(); ++v) {
        if (Clock::now() >= deadline) return std::move(d.result);
        if (views[v].kind != turn.view || searched_out[t * views.size() + v]) continue;
        if (turn.step != Step::kFillers && !readings[v].complete) continue;
        const int64_t nodes = round >= 30 ? std::numeric_limits<int64_t>::max() : turn.nodes << round;
        const TurnEnd end = take_turn(v, turn, nodes);
        if (end == TurnEnd::kDecided) return std::move(d.result);
        searched_out[t * views.size() + v] = end == TurnEnd::kSearchedOut;
        any = true;
      }
    }
    if (!any) break;  // every turn searched out: nothing more to find
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
