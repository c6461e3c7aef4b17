// Stacks: two buffers that alone share a lifetime (the same first and last step, no third
// buffer with it) most likely lie one on the other — in a cut of a capacity × time rectangle
// such a pair is one piece cut across bytes, as a relay (relays.h) is one cut across time; in a
// model's plan they are tensors made and freed together. So, less surely, do three or more that
// alone share one (a piece cut across bytes more than once). Joined into one block (one offset, the
// upper buffer at the lower one's end), the problem has fewer buffers; relays and stacks joined
// in turns (a block that hands its bytes to one buffer of its size, a run beside another of its
// lifetime) take most of a guillotine cut's structure into a few blocks.
//
// Limits: a heuristic restriction, as relays are: a placement of the joined problem is one of
// the original, but the joined problem may have none where the original has one (on the slack
// bench's guillotine cuts, 11–34 % of the pairs joined lie apart in the known placement, and yet
// the joined problem often has a placement). Buffers with a fixed offset or size 0 are never
// joined; nor are two whose alignments differ, or whose lower one's size is not a multiple of it.
#pragma once

#include <cstdint>
#include <vector>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

// A problem with some buffers joined into blocks, each placed at one offset.
struct Blocks {
  Problem joined;                        // one buffer per block
  std::vector<size_t> block_of;          // per buffer of the original problem: its block in `joined`
  std::vector<int64_t> offset_in_block;  // per buffer of the original problem: where it lies in its block
  int64_t joins = 0;                     // buffers joined onto others (0: `joined` is the problem)
};

// Each group of 2 to `most` buffers that alone share a lifetime as one block, bottom first in the
// problem's order (those whose sizes keep the alignment below).
Blocks join_stacks(const Problem& problem, size_t most = 2);

// Relays (relays.h) and stacks of up to `most` joined in turns, `rounds` times each (fewer when a
// round joins nothing).
Blocks join_relays_and_stacks(const Problem& problem, int rounds, size_t most = 2);

// The original problem's offsets from a placement of the blocks.
std::vector<int64_t> block_offsets(const Blocks& blocks, const std::vector<int64_t>& joined_offsets);

}  // namespace memledger::allocate
