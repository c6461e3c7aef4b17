// The decision problem at a given capacity, for problems with slack: is there a placement
// of every buffer within `capacity` bytes? Unlike the perfect-packing search (which demands
// that no byte is wasted), bytes may stay empty here, as long as every section of time keeps
// room for what still has to fit above its floor.
//
// Algorithm: a skyline search over canonical (bottom-justified) placements, in which every
// buffer rests on offset 0 or on a buffer below it. The placed buffers and the bytes
// declared empty fill each section of time from 0 up to its height. At a "well" (a plateau
// of sections lower than both neighbours) the search branches on the lowest open position,
// the well's leftmost section not yet declared empty at that height: either a buffer that
// starts in that section goes there, or that byte stays empty (allowed only while the section
// has slack, and only while the bytes it would lose before the next buffer can rest there
// fit that slack). A well whose every section is declared empty is raised to its lower
// wall, which is complete: the lowest buffer above it must rest on a wall. Pruning: in
// every section, the unplaced buffers live there must fit between its height and the
// capacity; in every well, the buffers that cross its walls must fit above the lower wall,
// and the sections at its floor must be spanned by a chain of buffers that fit there and of
// bytes left empty where there is slack (the perfect packing's tiling, where there is none);
// at a step of the skyline (higher on one side, lower on the other) in a section without
// slack, some unplaced buffer must start (end) at the higher side's edge and fit on the step.
// Identical buffers (same lifetime and size) are placed in one order only. Dominance (each
// rule maps a placement it cuts off onto one in a branch already searched without success):
// a well whose positions were all left empty is not raised while an unplaced buffer within it
// fits under the wall (it would drop into the hole), and of two buffers of one lifetime
// stacked directly, the upper one is not tried on the lower one when it already failed in
// the lower one's place (they can swap). The well with
// the fewest choices is branched on first; when no unplaced buffer spans a boundary in time
// any more, the two sides are searched independently (dynamic decomposition). Every failure
// carries its conflict set: the sections of time whose state explains it (a well that
// cannot be filled: its sections and walls; a branch whose every choice failed: its well and
// what its choices' failures named). A choice's failure whose set misses the well the choice
// was made in fails the branch at once with that set (conflict-directed backjumping: placing
// a buffer changes only the sections it lives in, so no other choice there can mend it). Restarts
// follow the Luby sequence over four variants (time mirrored or not, size or length
// first), then perturbed branching orders; the limits are unbounded, so the last run of a
// long enough budget completes.
// The search keeps its decisions on an explicit stack (heap memory), so the depth (one
// level per buffer placed, byte left empty or well raised) has no limit.
//
// Complete (kInfeasible is a proof) when every alignment divides the greatest common divisor
// of the sizes (then offsets are counted in that unit); otherwise unaligned heights are
// skipped to the next aligned offset and an exhausted search says kUnknown. Fixed offsets are
// not taken (kUnknown).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "memledger/plan/allocate/problem.h"
#include "memledger/plan/allocate/search_progress.h"

namespace memledger::allocate {

struct DecisionResult {
  enum class Outcome { kFound, kInfeasible, kUnknown };
  Outcome outcome = Outcome::kUnknown;
  std::vector<int64_t> offsets;  // in problem order, when found
  int64_t nodes = 0;
  int64_t restarts = 0;  // searches stopped by their node limit and started again
};

// Whether kInfeasible from decide_placement would be a proof for this problem.
bool decision_search_is_complete(const Problem& problem);

// `on_tick`, when set, is called about every thousand nodes with the nodes searched so far.
// The search also stops (kUnknown) after `max_nodes`. With `resume` (kept from an earlier call
// on the same problem and capacity), it goes on where that call's restarts stopped, and
// `max_nodes` counts the nodes searched before: the outcome is that of one call with that
// max_nodes, and `nodes` counts this call's only.
DecisionResult decide_placement(const Problem& problem, int64_t capacity,
                                std::chrono::steady_clock::time_point deadline,
                                const std::function<void(int64_t nodes)>& on_tick = {},
                                int64_t max_nodes = std::numeric_limits<int64_t>::max(),
                                SearchProgress* resume = nullptr);

// The same search with hole candidates (rectangles that hold nothing, as slack_fillers.h reads
// them from the slack), which fill the slack instead of positions left empty: each may be placed
// like a buffer where the slack of its sections holds it, and a section stays open until buffers
// and candidates fill it to the capacity, as in find_packing_with_holes (perfect_packing.h) —
// but with this search's pruning and its jumps back over decisions made elsewhere in time (on
// the slack bench's held-out seeds 190000-, with the true holes and 50 / 100 / 300 wrong
// candidates: 34 / 31 / 25 of 40 placed within 1 s against 30 / 27 / 23 for the packing). A
// heuristic: kInfeasible is never reported (a placement may need holes that are no candidate).
// Leaving positions empty besides, up to a budget, was tried and lost even the true holes.
DecisionResult decide_placement_with_holes(const Problem& problem, const std::vector<Buffer>& holes, int64_t capacity,
                                           std::chrono::steady_clock::time_point deadline,
                                           const std::function<void(int64_t nodes)>& on_tick = {},
                                           int64_t max_nodes = std::numeric_limits<int64_t>::max(),
                                           SearchProgress* resume = nullptr);

}  // namespace memledger::allocate
