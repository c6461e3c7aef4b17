// What the two skyline searches share (perfect_packing.cpp for tight problems and
// decision_search.cpp, which may leave bytes empty): the buffers of size > 0 with their
// lifetimes as ranges of sections (the spans between consecutive distinct steps), the same
// mirrored in time, the per-section lists of buffers in branching order with identical
// buffers chained (each waits for the one before it), the perturbed orders of later
// restarts, the restart schedule (Luby limits over four variants), and the stamps of when
// each section last changed, by which both keep a well's examination from node to node.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "memledger/plan/allocate/problem.h"
#include "memledger/plan/allocate/search_progress.h"
#include "split_mix.h"

namespace memledger::allocate::skyline {

struct Sections {
  std::vector<int32_t> index;  // into problem.buffers
  std::vector<int64_t> size, alignment;
  std::vector<int32_t> lo, hi;  // sections [lo, hi)
  int32_t sections = 0;
  std::vector<int64_t> steps;  // the distinct steps; section t is [steps[t], steps[t + 1]) (forward only)
};

// The buffers of size > 0, in problem order; sizes in bytes.
Sections build_sections(const Problem& problem);
Sections mirrored_in_time(const Sections& s);

enum class Branching { kSizeFirst, kLengthFirst };

struct Starters {
  std::vector<int32_t> order;               // every buffer, in branching order
  std::vector<std::vector<int32_t>> lists;  // per section: the buffers that start there, in that order
  std::vector<int32_t> twin_before;         // the identical buffer just before this one, or -1
};
Starters build_starters(const Sections& s, Branching branching);

// When each section's state last changed, on a clock that ticks at every change: a result
// made at now() from some sections still holds while none of them has a later at().
class SectionStamps {
 public:
  explicit SectionStamps(int32_t sections) : stamp_(static_cast<size_t>(sections), 0) {}
  void touch(int32_t first, int32_t end) {
    ++clock_;
    std::fill(stamp_.begin() + first, stamp_.begin() + end, clock_);
  }
  uint64_t at(int32_t t) const { return stamp_[static_cast<size_t>(t)]; }
  uint64_t now() const { return clock_; }

 private:
  std::vector<uint64_t> stamp_;
  uint64_t clock_ = 0;
};

// SplitMix64 over a seed: the place of a candidate in a perturbed branching order (seed 0:
// its place unchanged). Each candidate may move up to 15 places.
class Perturbation {
 public:
  explicit Perturbation(uint64_t seed) : active_(seed != 0), rng_(seed) {}
  bool active() const { return active_; }
  int64_t place(int64_t position);

 private:
  bool active_;
  SplitMix64 rng_;
};

// One run of the restart schedule: round r searches forward or backward in time, size or
// length first, perturbed from round 4 on, with a node limit that follows the Luby sequence
// (1 1 2 1 1 2 4 ...) in units of max(8 buffers, 4096) nodes: a bounded loss against the best
// fixed limit, and unbounded, so the last run of a long enough budget completes.
struct Round {
  bool backward = false;
  Branching branching = Branching::kSizeFirst;
  uint64_t seed = 0;
  int64_t node_limit = 0;
};
Round restart_round(uint64_t round, size_t buffers);

enum class Outcome { kFound, kInfeasible, kNodeLimit, kTimeout };

struct Restarts {
  Outcome outcome = Outcome::kTimeout;  // kFound, kInfeasible or kTimeout
  std::vector<int64_t> offsets;         // per buffer of the sections, when found
  int64_t nodes = 0;
  int64_t restarts = 0;  // runs stopped by their node limit
};

// Runs the schedule: `make(sections, round, nodes so far)` builds one search (forward or
// mirrored sections, as the round says) with run(node_limit) -> Outcome, nodes() and
// offsets(); rounds follow each other until one decides, the deadline has passed or
// `max_nodes` nodes were searched in all (then kTimeout). With `resume`, the schedule goes on
// after the rounds a call before ran to their own limit (the same search with a smaller
// max_nodes), and max_nodes counts their nodes too: the rounds searched and their limits are
// those of one call with that max_nodes, without searching the rounds already done again.
template <class MakeSearch>
Restarts run_restarts(const Sections& forward, std::chrono::steady_clock::time_point deadline, MakeSearch make,
                      int64_t max_nodes = std::numeric_limits<int64_t>::max(), SearchProgress* resume = nullptr) {
  const Sections backward = mirrored_in_time(forward);
  SearchProgress fresh;
  SearchProgress& done = resume ? *resume : fresh;
  Restarts result;
  for (;;) {
    const Round r = restart_round(done.rounds, forward.index.size());
    const int64_t left = max_nodes - done.nodes;
    auto search = make(r.backward ? backward : forward, r, result.nodes);
    const Outcome outcome = search.run(std::min(r.node_limit, left));
    result.nodes += search.nodes();
    if (outcome != Outcome::kNodeLimit) {
      result.outcome = outcome;
      if (outcome == Outcome::kFound) result.offsets = search.offsets();
      return result;
    }
    ++result.restarts;
    if (r.node_limit > left) return result;  // stopped by max_nodes: this round is not done
    ++done.rounds;
    done.nodes += search.nodes();
    if (std::chrono::steady_clock::now() > deadline || done.nodes >= max_nodes) return result;
  }
}

}  // namespace memledger::allocate::skyline
