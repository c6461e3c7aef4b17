// The decision search in offset order, after MiniMalloc (Moffitt, ASPLOS 2023), written
// anew: depth-first over canonical solutions in which buffers are placed in non-decreasing
// offset order, each at the lowest aligned offset above the placed buffers it meets in time.
// Pruning: a buffer whose lowest offset is at or above the lowest end any other buffer could
// reach is skipped (that other buffer would go first); for every section of time the floor
// of what is unplaced plus the sizes still unplaced must fit under the capacity. When the
// last buffer spanning a boundary in time is placed, the two sides are searched on their
// own (dynamic decomposition). Several static preorderings take turns with a doubling node
// limit (restarts).
//
// Complete with any alignment, but weaker than the well search (decision_search.h) on
// problems with slack; exact.h uses it only where that one is not complete (alignments that
// do not divide the sizes' common divisor).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "memledger/plan/allocate/decision_search.h"
#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

// Fixed offsets are not taken (kUnknown).
DecisionResult decide_in_offset_order(const Problem& problem, int64_t capacity,
                                      std::chrono::steady_clock::time_point deadline,
                                      const std::function<void(int64_t nodes)>& on_tick = {});

}  // namespace memledger::allocate
