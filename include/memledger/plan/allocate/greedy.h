// Greedy placement: fast heuristics under several orderings; the portfolio keeps the
// smallest arena. Unlike TFLite Micro's GreedyMemoryPlanner, which scans every earlier
// buffer for each buffer (O(n^2)), the sweep is O(n log n) and bottom-up is O(n log n) plus
// one O(log n) refresh per stale queue entry (bench/plan/greedy_scale_bench.cpp).
#pragma once

#include <span>
#include <string>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

// The order in which buffers are preferred (a tie-break for bottom-up, the allocation order
// within one step for the sweep).
enum class GreedyOrder { kSizeDesc, kDurationDesc, kAreaDesc, kLowerAsc };

enum class GreedyStrategy {
  // Fills the arena from offset 0 upwards. A buffer can go no lower than the highest end of
  // the placed buffers it meets in time (the "skyline" over its lifetime, kept in a segment
  // tree over time); the buffer with the lowest such offset is placed next (a priority queue
  // whose stale keys are refreshed when popped, valid because offsets only grow). This
  // builds the canonical solutions that the exact search enumerates. Limit: never places a
  // buffer into a hole below the skyline.
  kBottomUp,
  // Walks time forwards like an allocator that knows the future sizes: buffers that end are
  // freed (neighbouring holes merge), buffers that start take the smallest hole that fits
  // (best fit), else the top. Good when lifetimes nest. Not used with fixed offsets.
  kSweepBestFit,
};

struct GreedyRun {
  GreedyStrategy strategy;
  GreedyOrder order;
};

std::string to_string(GreedyStrategy strategy);
std::string to_string(GreedyOrder order);

// One heuristic under one ordering. The solution is valid; `optimal` is set when the arena
// equals the lower bound.
Solution plan_greedy(const Problem& problem, GreedyRun run);

// Every strategy under every ordering; from 10^5 buffers on, the sweep by size alone (the
// bottom-up queue's refreshes grow faster than n log n on large problems). The smallest
// arena wins.
Solution plan_greedy(const Problem& problem);

// The runs plan_greedy(problem) tries for a problem of n buffers.
std::span<const GreedyRun> greedy_portfolio(size_t n);

}  // namespace memledger::allocate
