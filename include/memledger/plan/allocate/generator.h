// Seeded problem generators for tests and benchmarks.
//
// Hard instances with a known optimum: a rectangle of capacity bytes × steps is cut into
// rectangles, each becoming a buffer (its time span × its byte span). The pieces tile the
// rectangle, so at every step the live sizes add up to exactly the capacity: the optimum,
// the lower bound and the capacity are one figure, and the cut itself is a witness.
//
// Instances with slack and a known feasible capacity: cut as above, then remove a share of
// the pieces, so the lower bound falls below the capacity while the remaining pieces, left
// where the cut put them, still place within it.
//
// Random problems: lifetimes and sizes loosely shaped like a network's activations (mostly
// short lives, some long), for property tests and scale benchmarks.
#pragma once

#include <cstdint>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

enum class CutStyle {
  // Recursive guillotine cuts: split a piece in two across time or across bytes.
  kGuillotine,
  // A brick wall: walking through time, a few neighbouring pieces end together and their
  // byte range is cut anew into a few pieces that start together. Not a guillotine tiling.
  kBrick,
};

struct HardInstance {
  Problem problem;               // offsets are not fixed; the buffers are shuffled
  std::vector<int64_t> witness;  // the offsets of the cut, an optimal solution
  int64_t optimum = 0;           // = capacity = lower bound
};

// `buffers` is the number of pieces (>= 1), capacity >= buffers.
HardInstance generate_hard_instance(uint64_t seed, int64_t buffers, CutStyle style, int64_t capacity = 1 << 20);

struct SlackInstance {
  Problem problem;               // offsets are not fixed; the buffers are shuffled
  std::vector<int64_t> witness;  // a placement within `capacity` (the cut's offsets)
  int64_t capacity = 0;          // feasible; the optimum may be lower
  int64_t lower_bound = 0;       // lower_bound(problem).bytes, below the capacity
  // The pieces taken out, with their offsets in the cut (fixed_offset): the holes of the
  // witness. With them the problem is tight again. For diagnostics only: a search is never
  // given them.
  std::vector<Buffer> removed;
};

// Cuts `buffers` + `removed` pieces and removes `removed` of them at random (1 <= removed <
// the pieces cut).
SlackInstance generate_slack_instance(uint64_t seed, int64_t buffers, int64_t removed, CutStyle style,
                                      int64_t capacity = 1 << 20);

// How the placement benches size the k-th of `count` instances (k from 0): 150 to 450 buffers,
// evenly; for the instances with slack, 1 %, 2 %, ..., 10 % of the pieces removed in turn (at
// least one). Tests that name a bench instance by its seed size it the same way.
struct BenchSizes {
  int64_t buffers = 0;
  int64_t percent = 0;  // of the pieces removed
  int64_t removed = 0;
};
BenchSizes bench_sizes(int64_t k, int64_t count);

Problem generate_random_problem(uint64_t seed, int64_t buffers, int64_t max_size = 1 << 16,
                                bool with_alignment = false);

}  // namespace memledger::allocate
