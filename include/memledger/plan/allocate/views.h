// Views of a placement problem: the problem as given, with buffers joined into blocks
// (stacks.h: relays and stacks, each block at one offset), and reversed in time. A placement of
// any view is one of the problem (block_offsets maps it back; a reversal keeps the offsets), so
// a search may look in whichever view finds one soonest: on the slack bench some instances a
// search leaves for seconds on the problem as given are placed in hundredths of a second in a
// joined or reversed view, and others the other way round (exact.cpp takes turns among them).
//
// Limits: a joined view may have no placement where the problem has one (stacks.h), so a
// failure in it proves nothing.
#pragma once

#include <vector>

#include "memledger/plan/allocate/problem.h"
#include "memledger/plan/allocate/stacks.h"

namespace memledger::allocate {

enum class ViewKind {
  kAsGiven,
  kEveryStack,          // relays and every stack, in turns (join_relays_and_stacks with no size limit)
  kStacksOfTwo,         // relays and stacks of two, in turns
  kRelays,              // relays alone
  kReversedEveryStack,  // the reversed problem's relays and every stack
};

// Relays and stacks are joined in up to this many turns (stacks.h; one, three and eight rounds
// placed within one instance of each other on the slack bench).
constexpr int kViewStackRounds = 3;

struct View {
  ViewKind kind = ViewKind::kAsGiven;
  Blocks blocks;  // blocks.joined is the view's problem
};

// The problem with every step t read as −1 − t: the same buffers, the same placements.
Problem reversed_in_time(const Problem& problem);

// Every view of the problem, the problem as given first; of the joined views of one direction,
// each only where it joins more than the one after it (every stack, stacks of two, relays), so
// no two views are the same problem; of the reversed problem, the one that joins every stack.
std::vector<View> views_of(const Problem& problem);

}  // namespace memledger::allocate
