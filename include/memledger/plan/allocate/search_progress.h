// How far a search with restarts (the decision search's Luby schedule) got in the calls made so
// far: the rounds that ran to their own node limit, and their nodes. Given back to a later call
// with a larger node limit, it goes on after those rounds instead of searching them again: the
// turns of a decision (exact.cpp) double their limits round after round, and without it each
// round would repeat the one before (half of its nodes).
#pragma once

#include <cstdint>

namespace memledger::allocate {

struct SearchProgress {
  uint64_t rounds = 0;  // restart rounds done
  int64_t nodes = 0;    // their nodes
};

}  // namespace memledger::allocate
