#include "memledger/plan/allocate/validate.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace memledger::allocate {

std::optional<std::string> find_violation(const Problem& problem, const Solution& solution) {
  const std::vector<Buffer>& buffers = problem.buffers;
  const std::vector<int64_t>& offsets = solution.offsets;
  if (offsets.size() != buffers.size()) {
    return fmt::format("the solution has {} offsets for {} buffers", offsets.size(), buffers.size());
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    const int64_t offset = offsets[i];
    if (offset < 0) return fmt::format("buffer '{}' has a negative offset {}", b.id, offset);
    if (offset % b.alignment != 0) {
      return fmt::format("buffer '{}' at offset {} is not aligned to {}", b.id, offset, b.alignment);
    }
    if (b.fixed_offset && *b.fixed_offset != offset) {
      return fmt::format("buffer '{}' is fixed at offset {} but placed at {}", b.id, *b.fixed_offset, offset);
    }
    if (offset > solution.arena_bytes - b.size) {
      return fmt::format("buffer '{}' [{}, {}) ends beyond the arena of {} bytes", b.id, offset, offset + b.size,
                         solution.arena_bytes);
    }
  }

  // Sweep through time. The live buffers never overlap each other (else we stopped), so a
  // starting buffer overlaps one of them iff it overlaps its neighbour below or above.
  struct Event {
    int64_t step;
    bool starts;
    size_t index;
  };
  std::vector<Event> events;
  events.reserve(2 * buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0) continue;
    events.push_back({buffers[i].lower, true, i});
    events.push_back({buffers[i].upper, false, i});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.step != b.step) return a.step < b.step;
    if (a.starts != b.starts) return !a.starts;  // `upper` is exclusive: ends first
    return a.index < b.index;
  });
  std::set<std::pair<int64_t, size_t>> live;  // (offset, index)
  auto overlap_message = [&](size_t a, size_t b, int64_t step) {
    const int64_t lo = std::max(offsets[a], offsets[b]);
    const int64_t hi = std::min(offsets[a] + buffers[a].size, offsets[b] + buffers[b].size);
    return fmt::format("buffers '{}' [{}, {}) and '{}' [{}, {}) are both live at step {} and share bytes [{}, {})",
                       buffers[a].id, offsets[a], offsets[a] + buffers[a].size, buffers[b].id, offsets[b],
                       offsets[b] + buffers[b].size, step, lo, hi);
  };
  for (const Event& e : events) {
    const std::pair<int64_t, size_t> key{offsets[e.index], e.index};
    if (!e.starts) {
      live.erase(key);
      continue;
    }
    const int64_t end = offsets[e.index] + buffers[e.index].size;
    auto above = live.lower_bound(key);
    if (above != live.end() && above->first < end) return overlap_message(above->second, e.index, e.step);
    if (above != live.begin()) {
      auto below = std::prev(above);
      if (below->first + buffers[below->second].size > offsets[e.index]) {
        return overlap_message(below->second, e.index, e.step);
      }
    }
    live.insert(above, key);
  }
  return std::nullopt;
}

}  // namespace memledger::allocate
