#include "memledger/plan/ledger.h"

#include <algorithm>

namespace memledger {

Ledger make_ledger(const Graph& graph, const Liveness& live) {
  Ledger ledger;
  for (const LiveBuffer& b : live.buffers) {
    auto& totals = ledger.by_category[b.category];
    totals.logical_bytes += b.logical_bytes;
    totals.physical_bytes += b.alias_of ? 0 : b.physical_bytes;
    totals.count += 1;
    ledger.logical_bytes += b.logical_bytes;
    ledger.physical_bytes += b.alias_of ? 0 : b.physical_bytes;
  }

  // Storage per step by a difference array: each owning buffer adds its bytes over the
  // interval in which it or an alias of it is live.
  const int steps = std::max(live.steps(), 1);
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 1, 0);
  const auto intervals = live.storage_intervals();
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    if (live.buffers[i].alias_of) continue;
    delta[static_cast<size_t>(intervals[i].first)] += live.buffers[i].physical_bytes;
    delta[static_cast<size_t>(intervals[i].second) + 1] -= live.buffers[i].physical_bytes;
  }
  std::vector<std::vector<int>> live_at(static_cast<size_t>(steps));
  for (size_t i = 0; i < live.buffers.size(); ++i)
    for (int s = live.buffers[i].first_step; s <= live.buffers[i].last_step; ++s)
      live_at[static_cast<size_t>(s)].push_back(static_cast<int>(i));

  int64_t running = 0;
  for (int s = 0; s < steps; ++s) {
    running += delta[static_cast<size_t>(s)];
    TimelineStep step{.step = s, .live_bytes = running, .live_buffers = std::move(live_at[static_cast<size_t>(s)])};
    if (s < live.steps()) {
      step.node = live.schedule[static_cast<size_t>(s)];
      const Node& node = graph.node(step.node);
      step.node_name = node.name.empty() ? node.op : node.name;
    }
    std::stable_sort(step.live_buffers.begin(), step.live_buffers.end(), [&](int a, int b) {
      return live.buffers[static_cast<size_t>(a)].physical_bytes > live.buffers[static_cast<size_t>(b)].physical_bytes;
    });
    if (running > ledger.peak_live_bytes) {
      ledger.peak_live_bytes = running;
      ledger.peak_step = s;
    }
    ledger.timeline.push_back(std::move(step));
  }
  return ledger;
}

}  // namespace memledger
