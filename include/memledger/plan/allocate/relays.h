// Relays: a buffer that ends at the step where another of the same size starts, with no other
// buffer of that size ending or starting there, most likely hands its bytes on — in a cut of a
// capacity × time rectangle such a pair is one piece cut across time (sizes are random, so an
// equal size at the same step is no coincidence), and in a model's plan it is a tensor
// replaced by one of its own shape. Joined into one buffer (one offset for the whole run), the
// problem has fewer buffers and far fewer placements to search: the perfect-packing search
// places tight guillotine cuts it is slow on.
//
// Limits: a heuristic restriction. A placement of the joined problem is one of the original;
// the joined problem may have none where the original has one (that proves nothing). Buffers
// with a fixed offset or size 0 are never joined, nor are buffers whose alignments differ.
#pragma once

#include <cstdint>
#include <vector>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

struct Relays {
  Problem joined;              // one buffer per run, the run's first id, lifetime of the run
  std::vector<size_t> run_of;  // per buffer of the original problem: its run in `joined`
  int64_t joined_pairs = 0;    // how many hand-overs were joined (0: `joined` is the problem)
};

Relays join_relays(const Problem& problem);

// The original problem's offsets from a placement of the joined one.
std::vector<int64_t> relay_offsets(const Relays& relays, const std::vector<int64_t>& joined_offsets);

}  // namespace memledger::allocate
