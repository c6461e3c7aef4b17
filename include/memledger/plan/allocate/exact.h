// Exact placement with a time budget: proves the arena minimal when it reaches the lower
// bound (or proves every smaller arena infeasible), otherwise returns the best arena found,
// never worse than the greedy portfolio.
//
// The search follows the ideas of MiniMalloc (Moffitt, ASPLOS 2023), written anew here:
// it decides "does everything fit in capacity C?" by depth-first search over canonical
// solutions only, in which buffers are placed in non-decreasing offset order, each at the
// lowest offset above the placed buffers it meets in time. Pruning: a buffer whose lowest
// offset is at or above the lowest end any other buffer could reach is skipped (that other
// buffer would go first in the canonical order); and for every section of time (between two
// consecutive events) the floor of what is still unplaced plus the sizes still unplaced must
// fit under C. When the last buffer spanning a boundary in time is placed, the two sides
// are searched independently (dynamic decomposition), and a buffer that meets no unplaced
// buffer is never swapped for another choice. Buffers are tried in order of lowest offset, ties broken by a static
// preordering (largest section total first, then size, then area); several preorderings
// take turns with a growing node limit. The capacity itself goes down from the greedy arena:
// the lower bound first, then a binary search between what is proven and what is found.
//
// Tight problems (every step exactly full at the lower bound, as in instances cut from a
// rectangle) first go to the perfect-packing search (perfect_packing.h), which is far
// stronger there; if it refutes the lower bound or runs out of its share of the budget,
// the search above improves on the greedy arena with what is left.
//
// Limits: problems with fixed offsets, or too many overlapping pairs, get the greedy result.
// See docs/benchmarks.md, "Placement", for the share of hard instances solved within 5 s.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

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
  int64_t max_overlap_pairs = 20'000'000;  // above this, the search is skipped
  // Called from the searching thread every thousand nodes or so, and after each capacity
  // tried; keep it cheap (memledger::Progress throttles its redraws).
  std::function<void(const ExactProgress&)> on_progress;
};

struct ExactStats {
  int64_t nodes = 0;
  int64_t probes = 0;  // capacities tried
  bool timed_out = false;
  bool searched = false;     // false when the search was skipped (fixed offsets, too large)
  int64_t greedy_arena = 0;  // the start point
};

// `start`, when given, is a valid solution to improve (e.g. the greedy portfolio's);
// otherwise the portfolio runs first (inside the budget).
Solution plan_exact(const Problem& problem, const ExactOptions& options = {}, const Solution* start = nullptr,
                    ExactStats* stats = nullptr);

// The decision procedure alone: a placement within `capacity`, or nothing when none exists
// or the budget ran out (`timed_out` tells which).
std::optional<Solution> find_placement_within(const Problem& problem, int64_t capacity, double time_budget_seconds,
                                              bool* timed_out = nullptr);

}  // namespace memledger::allocate
