#include "memledger/plan/allocate/slack_fillers.h"

#include <algorithm>
#include <string>
#include <vector>

namespace memledger::allocate {

std::optional<Problem> with_slack_fillers(const Problem& problem, int64_t capacity) {
  std::vector<int64_t> steps;
  for (const Buffer& b : problem.buffers) {
    if (b.size == 0) continue;
    steps.push_back(b.lower);
    steps.push_back(b.upper);
  }
  if (steps.empty()) return std::nullopt;
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  auto index_of = [&](int64_t step) { return std::lower_bound(steps.begin(), steps.end(), step) - steps.begin(); };
  // Live bytes per section (between consecutive distinct steps), by a difference array.
  const size_t sections = steps.size() - 1;
  std::vector<int64_t> slack(sections + 1, 0);
  for (const Buffer& b : problem.buffers) {
    if (b.size == 0) continue;
    slack[index_of(b.lower)] += b.size;
    slack[index_of(b.upper)] -= b.size;
  }
  int64_t live = 0;
  for (size_t k = 0; k < sections; ++k) {
    live += slack[k];
    if (live > capacity) return std::nullopt;
    slack[k] = capacity - live;
  }
  slack[sections] = 0;  // the sentinel that closes every layer

  Problem filled = problem;
  auto add = [&](size_t first, size_t end, int64_t size) {
    filled.buffers.push_back(
        Buffer{.id = "slack-filler-" + std::to_string(filled.buffers.size() - problem.buffers.size()),
               .size = size,
               .alignment = 1,
               .lower = steps[first],
               .upper = steps[end],
               .fixed_offset = std::nullopt});
  };
  // The profile's layers by one sweep: a stack of (first section, height) with rising
  // heights; where the profile drops, each layer above the new height ends there.
  struct Open {
    size_t first;
    int64_t height;
  };
  std::vector<Open> open;
  for (size_t k = 0; k <= sections; ++k) {
    size_t first = k;
    while (!open.empty() && open.back().height > slack[k]) {
      const Open top = open.back();
      open.pop_back();
      const int64_t base = std::max(slack[k], open.empty() ? int64_t{0} : open.back().height);
      add(top.first, k, top.height - base);
      first = top.first;
    }
    if (slack[k] > (open.empty() ? 0 : open.back().height)) open.push_back({first, slack[k]});
  }
  return filled;
}

}  // namespace memledger::allocate
