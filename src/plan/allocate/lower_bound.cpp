#include "memledger/plan/allocate/lower_bound.h"

#include <algorithm>
#include <vector>

namespace memledger::allocate {

LowerBound lower_bound(const Problem& problem) {
  struct Event {
    int64_t step;
    int64_t delta;  // + size at lower, - size at upper
  };
  std::vector<Event> events;
  events.reserve(2 * problem.buffers.size());
  LowerBound bound;
  for (const Buffer& b : problem.buffers) {
    if (b.fixed_offset) bound.bytes = std::max(bound.bytes, *b.fixed_offset + b.size);
    if (b.size == 0) continue;
    events.push_back({b.lower, b.size});
    events.push_back({b.upper, -b.size});
  }
  // `upper` is exclusive: at one step, ends come before starts.
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.step != b.step ? a.step < b.step : a.delta < b.delta; });
  int64_t live = 0;
  for (const Event& e : events) {
    live += e.delta;  // cannot overflow: check_problem bounds the sum of all sizes
    if (live > bound.peak_live_bytes) {
      bound.peak_live_bytes = live;
      bound.peak_step = e.step;
    }
  }
  bound.bytes = std::max(bound.bytes, bound.peak_live_bytes);
  return bound;
}

}  // namespace memledger::allocate
