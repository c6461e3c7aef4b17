#include "memledger/plan/allocate/problem.h"

#include <algorithm>

#include "memledger/core/error.h"

namespace memledger::allocate {

void check_problem(const Problem& problem) {
  // Every planner's arena is at most the fixed ends plus every other buffer stacked with its
  // worst alignment padding; when that sum fits 64 bits, no planner can overflow.
  int64_t worst_arena = 0;
  for (const Buffer& b : problem.buffers) {
    if (b.lower >= b.upper) fail("buffer '{}': lower {} must be less than upper {}", b.id, b.lower, b.upper);
    if (b.size < 0) fail("buffer '{}': size {} is negative", b.id, b.size);
    if (b.alignment <= 0) fail("buffer '{}': alignment {} must be positive", b.id, b.alignment);
    int64_t extent = 0;
    if (b.fixed_offset) {
      const int64_t offset = *b.fixed_offset;
      if (offset < 0) fail("buffer '{}': fixed offset {} is negative", b.id, offset);
      if (offset % b.alignment != 0) {
        fail("buffer '{}': fixed offset {} is not a multiple of its alignment {}", b.id, offset, b.alignment);
      }
      if (__builtin_add_overflow(offset, b.size, &extent)) {
        fail("buffer '{}': offset {} + size {} overflows 64 bits", b.id, offset, b.size);
      }
    } else if (__builtin_add_overflow(b.size, b.alignment - 1, &extent)) {
      fail("buffer '{}': size {} with alignment {} overflows 64 bits", b.id, b.size, b.alignment);
    }
    if (__builtin_add_overflow(worst_arena, extent, &worst_arena)) {
      fail("the buffers' total size overflows 64 bits (at buffer '{}')", b.id);
    }
  }
  // Fixed buffers that are live at once must not share a byte: no planner could keep both.
  // Sorted by offset, each is checked against the fixed buffers that start below its end.
  std::vector<const Buffer*> fixed;
  for (const Buffer& b : problem.buffers)
    if (b.fixed_offset && b.size > 0) fixed.push_back(&b);
  std::sort(fixed.begin(), fixed.end(),
            [](const Buffer* a, const Buffer* b) { return *a->fixed_offset < *b->fixed_offset; });
  for (size_t i = 0; i < fixed.size(); ++i)
    for (size_t j = i + 1; j < fixed.size() && *fixed[j]->fixed_offset < *fixed[i]->fixed_offset + fixed[i]->size; ++j)
      if (fixed[i]->lower < fixed[j]->upper && fixed[j]->lower < fixed[i]->upper)
        fail("buffers '{}' and '{}' have fixed offsets {} and {} that overlap while both are live", fixed[i]->id,
             fixed[j]->id, *fixed[i]->fixed_offset, *fixed[j]->fixed_offset);
}

int64_t arena_bytes(const Problem& problem, const std::vector<int64_t>& offsets) {
  ML_CHECK(offsets.size() == problem.buffers.size());
  int64_t arena = 0;
  for (size_t i = 0; i < offsets.size(); ++i) arena = std::max(arena, offsets[i] + problem.buffers[i].size);
  return arena;
}

bool has_fixed_offsets(const Problem& problem) {
  return std::any_of(problem.buffers.begin(), problem.buffers.end(),
                     [](const Buffer& b) { return b.fixed_offset.has_value(); });
}

}  // namespace memledger::allocate
