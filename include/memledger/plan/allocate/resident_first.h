// Puts the buffers that live for the whole schedule (a model's resident weights) at the
// bottom of the arena, in the order the planner gave them, and moves every other buffer
// down by the resident bytes that were below it. Never changes the arena size: a resident
// buffer overlaps every other buffer in time, so no other buffer can straddle one, and
// closing the gaps keeps every pair that was apart apart. The result is one contiguous
// constant region followed by the scratch region, which is what a deployment maps (and
// what the HTML report draws compressed).
#pragma once

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

// `solution` unchanged when there is nothing to move, when the problem has fixed offsets,
// or when the move would break a buffer's alignment.
Solution resident_first(const Problem& problem, Solution solution);

}  // namespace memledger::allocate
