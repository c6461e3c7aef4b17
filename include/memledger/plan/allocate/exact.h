// Exact placement with a time budget, as a sequence of decisions "does everything fit in
// C bytes?": at the requested capacity first (when one is given), then a binary search on
// the arena between the lower bound and the best arena found, which starts from the greedy
// portfolio's. The result proves the arena minimal when it reaches the lower bound (or every
// smaller arena was refuted); it is never worse than the greedy start.
//
// Each decision is taken by the search that suits the capacity's slack: a tight capacity
// (every section of time exactly full, as in instances cut from a rectangle) goes to the
// perfect-packing search (perfect_packing.h), which may demand that no byte is wasted (first on
// each forward joined view, at most a million nodes each); any
// other to the decision search with waste (decision_search.h), or, where alignments that do
// not divide the sizes keep that one from being complete, to the offset-order search
// (offset_order_search.h). With slack, the decision takes turns in rounds (exact.cpp's table):
// each turn one step on one view of the problem (views.h: as given, with relays and stacks
// joined into blocks, reversed in time and joined) with a node limit that doubles from round to
// round — the decision search itself; the decision search with the holes read from the
// buffers' edges (slack_fillers.h) taken as buffers, or choosing its holes among candidates; the
// same on that problem joined again; a perfect packing with the slack as fillers. The decision
// search on the problem as given comes first, with 100 000 nodes (most problems it places at
// once), and its failure where it is complete proves there is no placement; a placement found in
// any view is one of the problem, a failure there proves nothing. Without a complete decision
// search, the filler packings and then the offset-order search on each joined view (a quarter of
// the time left each) and on the problem decide.
//
// Limits: problems with fixed offsets, or more than `max_search_buffers` buffers, get the
// greedy result. See docs/benchmarks.md, "Placement", for the shares solved within budget.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "memledger/plan/allocate/decision_search.h"
#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

// A snapshot for a progress display; the library itself never prints.
struct ExactProgress {
  double elapsed_seconds = 0;
  double budget_seconds = 0;
  int64_t nodes = 0;
  int64_t best_arena = 0;   // the smallest arena found so far
  int64_t lower_bound = 0;  // every smaller arena is proven impossible
};

struct ExactOptions {
  double time_budget_seconds = 5.0;
  // When set, the first decision is at this capacity, with the whole budget; the arena is
  // then minimised further with what is left.
  std::optional<int64_t> capacity;
  int64_t max_search_buffers = 200'000;  // above this, the search is skipped
  // Called from the searching thread every thousand nodes or so, and after each capacity
  // tried; keep it cheap (memledger::Progress throttles its redraws).
  std::function<void(const ExactProgress&)> on_progress;
};

// The best arena at one moment of the search (the first entry is the start).
struct ExactImprovement {
  double seconds = 0;
  int64_t arena_bytes = 0;
  int64_t nodes = 0;
};

struct ExactStats {
  int64_t nodes = 0;
  int64_t restarts = 0;  // searches stopped by a node limit and started again
  int64_t probes = 0;    // capacities decided or tried
  bool timed_out = false;
  bool searched = false;     // false when the search was skipped (fixed offsets, too large)
  int64_t greedy_arena = 0;  // the start point
  int64_t lower_bound = 0;   // lower_bound(problem).bytes
  int64_t proven_bound = 0;  // every smaller arena is proven impossible (>= lower_bound)
  double seconds = 0;        // wall time spent
  std::vector<ExactImprovement> best_over_time;
};

struct ExactResult {
  Solution solution;
  ExactStats stats;
};

// `start`, when given, is a valid solution to improve (e.g. the greedy portfolio's);
// otherwise the portfolio runs first (inside the budget).
ExactResult plan_exact(const Problem& problem, const ExactOptions& options = {}, const Solution* start = nullptr);

// One decision at `capacity`, by the search that suits its slack: a placement within it, a
// proof that none exists (kInfeasible), or kUnknown when the budget ran out.
struct PlacementDecision {
  DecisionResult::Outcome outcome = DecisionResult::Outcome::kUnknown;
  std::optional<Solution> solution;
  int64_t nodes = 0;
  int64_t restarts = 0;
};
PlacementDecision decide_within(const Problem& problem, int64_t capacity, double time_budget_seconds);

}  // namespace memledger::allocate
