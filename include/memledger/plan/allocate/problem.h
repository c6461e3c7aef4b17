// The placement problem of plan/allocate: buffers with a size, an alignment and a lifetime
// [lower, upper) in schedule steps go in, one offset per buffer and an arena size come out.
// It knows no graph; plan/liveness produces these buffers, the CSV form reads them from files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memledger::allocate {

struct Buffer {
  std::string id;
  int64_t size = 0;                     // bytes; 0 is allowed and occupies nothing
  int64_t alignment = 1;                // the offset must be a multiple of this (> 0)
  int64_t lower = 0;                    // first step the buffer is live, inclusive
  int64_t upper = 0;                    // first step it is dead again, exclusive (lower < upper)
  std::optional<int64_t> fixed_offset;  // placed here by the caller; planners keep it
};

struct Problem {
  std::vector<Buffer> buffers;
};

struct Solution {
  std::vector<int64_t> offsets;  // one per buffer, in the problem's order
  int64_t arena_bytes = 0;       // max over buffers of offset + size
  std::string algorithm;         // which planner (and ordering) produced the offsets
  bool optimal = false;          // arena_bytes is proven minimal (it reached a proven lower bound)
};

// Throws a bad-input Error naming the first buffer that is malformed: lower >= upper, a
// negative size, a non-positive alignment, a negative or misaligned fixed offset, or an end
// (offset + size) that overflows 64 bits.
void check_problem(const Problem& problem);

// max over buffers of offsets[i] + size (0 for no buffers).
int64_t arena_bytes(const Problem& problem, const std::vector<int64_t>& offsets);

bool has_fixed_offsets(const Problem& problem);

}  // namespace memledger::allocate
