#include "memledger/plan/allocate/resident_first.h"

#include <algorithm>
#include <limits>

namespace memledger::allocate {

Solution resident_first(const Problem& problem, Solution solution) {
  const auto& buffers = problem.buffers;
  if (buffers.empty() || has_fixed_offsets(problem) || solution.offsets.size() != buffers.size()) return solution;
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (const Buffer& b : buffers) {
    first = std::min(first, b.lower);
    last = std::max(last, b.upper);
  }
  std::vector<size_t> resident;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].size > 0 && buffers[i].lower == first && buffers[i].upper == last) resident.push_back(i);
  if (resident.empty()) return solution;
  const std::vector<int64_t>& old = solution.offsets;
  std::sort(resident.begin(), resident.end(), [&](size_t a, size_t b) { return old[a] < old[b]; });

  std::vector<int64_t> moved(old.size(), 0);
  std::vector<char> is_resident(old.size(), 0);
  int64_t resident_bytes = 0;
  for (size_t i : resident) {
    if (resident_bytes % buffers[i].alignment != 0) return solution;
    moved[i] = resident_bytes;
    resident_bytes += buffers[i].size;
    is_resident[i] = 1;
  }
  // Resident bytes below each offset: prefix sums over the residents in offset order.
  std::vector<int64_t> starts, below;
  int64_t sum = 0;
  for (size_t i : resident) {
    starts.push_back(old[i]);
    below.push_back(sum += buffers[i].size);
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (is_resident[i] || buffers[i].size == 0) continue;
    const auto k = std::upper_bound(starts.begin(), starts.end(), old[i]) - starts.begin();
    const int64_t under = k == 0 ? 0 : below[static_cast<size_t>(k - 1)];
    moved[i] = old[i] - under + resident_bytes;
    if (moved[i] % buffers[i].alignment != 0) return solution;
  }
  solution.offsets = std::move(moved);
  solution.arena_bytes = arena_bytes(problem, solution.offsets);
  return solution;
}

}  // namespace memledger::allocate
