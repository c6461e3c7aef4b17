// The slack of a problem at a capacity, as filler buffers that make it tight: the room left
// in each section of time (capacity − the sizes live there) is cut into the horizontal
// layers of its profile (a histogram: each layer a maximal run of sections at least that
// high), one filler per layer. A perfect packing of the filled problem (perfect_packing.h)
// places the real buffers within the capacity, holes where the fillers lie; the
// perfect-packing search prunes far harder than a search that may leave bytes empty, so it
// is tried first, on a share of the budget (exact.cpp).
//
// Limits: a heuristic restriction — the holes must be shaped like these layers, so the
// filled problem may be infeasible where the original is not (that proves nothing about the
// original). No fillers when some section is already above the capacity.
#pragma once

#include <cstdint>
#include <optional>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

// The problem's buffers, in order and unchanged, then the fillers (ids "slack-filler-K"),
// or nullopt when a section holds more than `capacity` or there is no buffer of size > 0.
std::optional<Problem> with_slack_fillers(const Problem& problem, int64_t capacity);

}  // namespace memledger::allocate
