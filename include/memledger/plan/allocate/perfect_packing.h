// The exact search for "tight" problems: every section of time is exactly full at the
// capacity (the sizes live at each step add up to it), as in instances cut from a
// capacity × time rectangle. Then a placement within the capacity is a perfect packing: no
// byte is ever wasted, and the search can demand that every gap be filled exactly.
//
// Algorithm (a skyline search, in the spirit of perfect-packing searches for rectangle
// packing, specialised to a fixed time axis): the placed buffers always fill each section
// of time from 0 up to its height. In a "closed well" (a plateau of sections lower than
// both neighbours) the next byte of the first section must be covered by a buffer placed
// exactly there, so it starts in that section and ends within the well: the search
// branches over those buffers only, at the well with the fewest of them (the lowest
// plateau is always one), trying flush fits first (filling the width, meeting a wall),
// identical buffers once. Every gap is checked at every node: a closed well must be tiled
// along its floor by a chain of unplaced buffers and hold, in every section, enough of
// the buffers that live within it to reach its lower wall; an open plateau needs a buffer
// that starts (or ends) there and fits. Heights are arrays, raised by a placement and
// lowered on the way back. Restarts follow the Luby sequence over four variants (time
// mirrored or not, size or length first) and then perturbed branching orders, so one
// unlucky order does not hold the whole budget; the limits are unbounded, so a run that
// is given the time completes.
//
// With hole candidates (find_packing_with_holes), a problem with slack is packed the same way:
// the candidates are rectangles that hold nothing, placed like buffers where the slack not yet
// taken by chosen holes covers them, and the packing is done when every buffer is placed and
// every section is full — the search chooses the holes as it packs, with the perfect packing's
// pruning (each section's chosen holes add up to its slack exactly).
//
// Limits: only tight problems (or problems with hole candidates) of at most
// kPerfectPackingMaxBuffers entries (otherwise kNotApplicable: the search recurses once per
// entry, and once per part of a hole candidate: each part meets a wall and so removes a step of
// the skyline, at most sections + 2 × entries along a path); complete there, so kInfeasible is a
// proof — with hole candidates, a proof only that no placement has its holes among them (whole,
// or in parts up to a wall). Exponential in the worst case; the time budget is honoured.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

inline constexpr size_t kPerfectPackingMaxBuffers = 10'000;

struct PerfectPackingResult {
  enum class Outcome { kFound, kInfeasible, kTimeout, kNotApplicable };
  Outcome outcome = Outcome::kNotApplicable;
  std::vector<int64_t> offsets;  // in problem order, when found
  int64_t nodes = 0;
  int64_t restarts = 0;  // searches stopped by their node limit and started again
};

// True when the sizes live at every step between the first lower and the last upper add up
// to exactly `capacity`, no buffer is fixed, and there is at least one buffer of size > 0.
bool is_tight(const Problem& problem, int64_t capacity);

// `on_tick`, when set, is called now and then (about every thousand nodes) with the nodes
// searched so far; it must be cheap. The search also stops (kTimeout) after `max_nodes`.
PerfectPackingResult find_perfect_packing(const Problem& problem, int64_t capacity,
                                          std::chrono::steady_clock::time_point deadline,
                                          const std::function<void(int64_t nodes)>& on_tick = {},
                                          int64_t max_nodes = std::numeric_limits<int64_t>::max());

// Whether a hole candidate goes in whole, or may also be placed in parts, each part of its
// lifetime and as high as the well's wall it meets (the rest stays a candidate): two holes of
// one lifetime show in the slack profile as one rise, so the candidates hold only their sum
// (guillotine cuts are full of them).
enum class HoleParts { kWhole, kSplitAtWalls };

// `holes`: the hole candidates (their lower and upper must be steps where some buffer of the
// problem starts or ends; others are left out). Every section of the problem must hold at most
// `capacity`. Offsets are those of the problem's buffers.
PerfectPackingResult find_packing_with_holes(const Problem& problem, const std::vector<Buffer>& holes, int64_t capacity,
                                             std::chrono::steady_clock::time_point deadline,
                                             const std::function<void(int64_t nodes)>& on_tick = {},
                                             int64_t max_nodes = std::numeric_limits<int64_t>::max(),
                                             HoleParts parts = HoleParts::kWhole);

}  // namespace memledger::allocate
