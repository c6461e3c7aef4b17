// A heuristic for the decision at a capacity on problems with slack: a local search over
// the order in which a first-fit decoder places the buffers. Where a problem has much
// slack there are many placements within the capacity, and the exact searches
// (decision_search.h) can drown in choices a good order finds at once.
//
// Decoder: buffers in the order, each at the lowest aligned offset where it meets no
// buffer placed before it in time and bytes (first fit, holes included). Every placement
// is reached by some order (place the buffers of any solution by increasing offset: each
// lands at or below its offset there), so the search space loses nothing. Search: start
// from the greedy portfolio's plan (its buffers by offset); a move takes a buffer that ends
// above the capacity and puts it earlier — right before one of the buffers in its way, or
// at a random earlier position — and the order is decoded again from there. The objective
// is the arena above the capacity, then the bytes × steps of every buffer above it; a move is kept
// when the overflow is no worse than it was or than L moves ago (late-acceptance hill
// climbing), so plateaus are crossed. Seeded (splitmix), so a run with a round limit is
// repeatable; with a deadline, where it stops depends on time.
//
// EXPERIMENT, measured and not used (docs/benchmarks.md, Placement, fourth pass).
//
// Limits: a heuristic — it never proves that nothing fits (the exact searches do); fixed
// offsets are not taken (it reports not found at once).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

struct OrderSearchOptions {
  uint64_t seed = 1;
  int64_t max_rounds = -1;  // moves tried; < 0: until the deadline
  // Instead of the order search: large-neighbourhood repair of `start` (the buffers live at
  // one step of an overflowing buffer re-placed by a small branch-and-bound, the rest fixed).
  bool repair = false;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Called about every thousand rounds with the rounds so far.
  std::function<void(int64_t rounds)> on_tick;
};

struct OrderSearchResult {
  bool found = false;            // offsets place every buffer within the capacity
  std::vector<int64_t> offsets;  // the best placement seen (valid), in problem order
  int64_t arena_bytes = 0;       // its arena
  int64_t rounds = 0;            // moves tried
};

// `start` (optional) is a valid placement to start from, e.g. the greedy portfolio's; without
// it the portfolio runs first.
OrderSearchResult search_orders(const Problem& problem, int64_t capacity, const OrderSearchOptions& options,
                                const std::vector<int64_t>* start = nullptr);

}  // namespace memledger::allocate
