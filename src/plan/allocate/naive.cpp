#include "memledger/plan/allocate/naive.h"

#include <algorithm>

#include "memledger/core/checked.h"
#include "memledger/plan/allocate/lower_bound.h"

namespace memledger::allocate {

Solution plan_naive(const Problem& problem) {
  Solution solution;
  solution.algorithm = "naive";
  solution.offsets.assign(problem.buffers.size(), 0);
  int64_t top = 0;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    if (b.fixed_offset) {
      solution.offsets[i] = *b.fixed_offset;
      top = std::max(top, *b.fixed_offset + b.size);
    }
  }
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    if (b.fixed_offset) continue;
    solution.offsets[i] = align_up(top, b.alignment, "naive arena");
    top = solution.offsets[i] + b.size;
  }
  solution.arena_bytes = top;
  solution.optimal = solution.arena_bytes == lower_bound(problem).bytes;
  return solution;
}

}  // namespace memledger::allocate
