// The slack of a problem at a capacity, as filler buffers that make it tight: the room left
// in each section of time (capacity − the sizes live there) is cut into rectangles whose
// stacked profile is that room — the horizontal layers of the profile (a histogram: each
// layer a maximal run of sections at least that high), or a sweep that starts a filler
// where the profile rises and ends open fillers whose heights make a drop (the holes that
// pieces taken out of a full placement leave: on the slack bench's development seeds it
// places about three times as many of the instances the first decision search leaves as the
// layers do). A perfect packing of the filled problem (perfect_packing.h)
// places the real buffers within the capacity, holes where the fillers lie; the
// perfect-packing search prunes far harder than a search that may leave bytes empty, so it
// gets a short turn of its own (exact.cpp).
//
// The holes can also be read from the buffers beside them (edge_holes): a hole that starts
// where some buffers end and others start is as high as a difference of their sizes; those
// taken as buffers leave a problem with far less slack (exact.cpp tries it with a packing and
// with the decision search).
//
// Limits: a heuristic restriction — the holes must be shaped like these fillers, so the
// filled problem may be infeasible where the original is not (that proves nothing about the
// original). No fillers when some section is already above the capacity.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

// How the slack profile is cut: seed 0 its layers; any other seed one decomposition by a
// sweep over time, as the pieces taken out of a full placement would leave it: a filler
// starts wherever the profile rises, and where it drops, open fillers whose heights add up to
// the drop end there (the seed orders the open fillers when several sets would do; where
// none does, fillers end in that order, the last one split as in the layers).
struct FillerShape {
  uint64_t seed = 0;
};

// The problem's buffers, in order and unchanged, then the fillers (ids "slack-filler-K"),
// or nullopt when a section holds more than `capacity` or there is no buffer of size > 0.
std::optional<Problem> with_slack_fillers(const Problem& problem, int64_t capacity, const FillerShape& shape = {});

// Hole candidates for find_packing_with_holes (perfect_packing.h): the sweep's fillers and
// those of `decompositions` more sweeps that read a change of the profile as one hole ending
// where another begins with probability `replace`, each rectangle once. A packing chooses among
// them, so the holes need not all come from one decomposition. decide_within (exact.h) gives
// such a packing a short turn. Limits: the true holes of guillotine cuts, which overlap longer in
// time (and two holes of one lifetime, read as one rise), are often not among the candidates;
// a packing with HoleParts::kSplitAtWalls places the latter as parts of their sum.
struct HoleCandidates {
  int decompositions = 40;
  double replace = 0.3;
  uint64_t seed = 2;
};
std::vector<Buffer> slack_hole_candidates(const Problem& problem, int64_t capacity, const HoleCandidates& options = {});

// How edge_holes reads: sums of up to `most` buffers per side. A candidate that spans the
// problem's first or last step is read at its other edge only; with `ambiguous_open` false it
// is left out where another candidate reads the same height at that edge (the hole may end, or
// start, there instead: a chain the edge cannot tell apart).
struct EdgeReading {
  int most = 3;
  bool ambiguous_open = true;
};

// The candidates whose heights the buffers beside both their edges give, as a cut whose other
// pieces are buffers would: at the first step, some (at least one, at most `most`) of the
// buffers ending there minus some (at most `most`) of those starting there; at the end, some
// starting there minus some ending there (any height at the problem's first and last steps,
// but never both: such a candidate has nothing to be read from). Each reading (a step and a
// height) gives at most one hole; candidates read at both edges go first, in the candidates'
// order, each taken while the slack left holds it; ids "edge-hole-K". On the slack bench's
// development seeds 202 of 352 true holes of brick cuts pass and 7 of 2371 wrong candidates
// (guillotine: 119 of 351, 74 of 5508): a hole beside another hole at one of its edges does not
// pass, and wrong candidates rarely do. A packing that takes them as buffers chooses the rest
// among far fewer candidates.
std::vector<Buffer> edge_holes(const Problem& problem, int64_t capacity, const std::vector<Buffer>& candidates,
                               const EdgeReading& reading = {});

// The problem with edge_holes taken as buffers (appended, ids "edge-hole-K") and the
// candidates of the slack they leave; up to `rounds` times, each round reading the edges with
// the holes taken so far beside the buffers.
struct EdgeHoles {
  Problem problem;
  std::vector<Buffer> candidates;
  int taken = 0;
};
EdgeHoles with_edge_holes(const Problem& problem, int64_t capacity, const std::vector<Buffer>& candidates,
                          int rounds = 1, const EdgeReading& reading = {});

}  // namespace memledger::allocate
