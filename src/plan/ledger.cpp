#include "memledger/plan/ledger.h"

#include <algorithm>

namespace memledger {
namespace {

enum class InputCount { kAsPlanned, kWith, kWithout };

// Per owning buffer, the steps during which it or an alias of it that counts is live
// ({-1, -1}: none). Which buffers count: those in the arena, and graph inputs as `inputs`
// says.
std::vector<std::pair<int, int>> counted_spans(const Liveness& live, InputCount inputs) {
  const auto counts = [&](const LiveBuffer& b) {
    if (b.category == BufferCategory::kInput && inputs != InputCount::kAsPlanned) return inputs == InputCount::kWith;
    return !b.external;
  };
  std::vector<std::pair<int, int>> span(live.buffers.size(), {-1, -1});
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    if (!counts(b)) continue;
    auto& s = span[static_cast<size_t>(live.storage_of(static_cast<int>(i)))];
    s = s.first < 0 ? std::pair{b.first_step, b.last_step}
                    : std::pair{std::min(s.first, b.first_step), std::max(s.second, b.last_step)};
  }
  return span;
}

// Storage in use per step: each owning buffer adds its bytes over its span (a difference
// array), those that `select` keeps.
template <typename Select>
std::vector<int64_t> live_per_step(const Liveness& live, const std::vector<std::pair<int, int>>& span, Select select) {
  const int steps = std::max(live.steps(), 1);
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 1, 0);
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    if (live.buffers[i].alias_of || span[i].first < 0 || !select(live.buffers[i])) continue;
    delta[static_cast<size_t>(span[i].first)] += live.buffers[i].physical_bytes;
    delta[static_cast<size_t>(span[i].second) + 1] -= live.buffers[i].physical_bytes;
  }
  std::vector<int64_t> out(static_cast<size_t>(steps));
  int64_t running = 0;
  for (size_t s = 0; s < out.size(); ++s) out[s] = running += delta[s];
  return out;
}

std::vector<int64_t> live_per_step(const Liveness& live, InputCount inputs) {
  return live_per_step(live, counted_spans(live, inputs), [](const LiveBuffer&) { return true; });
}

int64_t peak_of(const std::vector<int64_t>& per_step) {
  return per_step.empty() ? 0 : *std::max_element(per_step.begin(), per_step.end());
}

}  // namespace

Ledger make_ledger(const Graph& graph, const Liveness& live) {
  Ledger ledger;
  for (const LiveBuffer& b : live.buffers) {
    auto& totals = ledger.by_category[b.category];
    const int64_t owned = b.alias_of ? 0 : b.physical_bytes;
    totals.logical_bytes += b.logical_bytes;
    totals.physical_bytes += owned;
    totals.count += 1;
    ledger.logical_bytes += b.logical_bytes;
    ledger.physical_bytes += owned;
    if (b.external) {
      totals.external_bytes += owned;
      ledger.external_bytes += owned;
      if (b.category == BufferCategory::kInput) ledger.inputs_in_arena = false;
    }
  }

  const int steps = std::max(live.steps(), 1);
  std::vector<std::vector<int>> starts(static_cast<size_t>(steps)), ends(static_cast<size_t>(steps));
  std::vector<int> live_count(static_cast<size_t>(steps) + 1, 0);  // a difference array first
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    if (b.external || b.first_step < 0 || b.first_step > b.last_step) continue;
    starts[static_cast<size_t>(b.first_step)].push_back(static_cast<int>(i));
    ends[static_cast<size_t>(b.last_step)].push_back(static_cast<int>(i));
    ++live_count[static_cast<size_t>(b.first_step)];
    --live_count[static_cast<size_t>(b.last_step) + 1];
  }
  const auto largest_first = [&](std::vector<int>& list) {
    std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
      return live.buffers[static_cast<size_t>(a)].physical_bytes > live.buffers[static_cast<size_t>(b)].physical_bytes;
    });
  };

  const auto span = counted_spans(live, InputCount::kAsPlanned);
  const std::vector<int64_t> arena = live_per_step(live, span, [](const LiveBuffer&) { return true; });
  std::map<BufferCategory, std::vector<int64_t>> by_category;
  for (const auto& [category, totals] : ledger.by_category)
    by_category[category] = live_per_step(live, span, [c = category](const LiveBuffer& b) { return b.category == c; });
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    if (!b.alias_of && b.physical_bytes > 0 && live.steps() > 0 && span[i] == std::pair{0, live.steps() - 1})
      ledger.whole_program_by_category[b.category] += b.physical_bytes;
  }

  int running = 0;
  for (int s = 0; s < steps; ++s) {
    running += live_count[static_cast<size_t>(s)];
    TimelineStep step{.step = s,
                      .live_bytes = arena[static_cast<size_t>(s)],
                      .live_count = running,
                      .starts = std::move(starts[static_cast<size_t>(s)]),
                      .ends = std::move(ends[static_cast<size_t>(s)])};
    for (const auto& [category, per_step] : by_category)
      if (per_step[static_cast<size_t>(s)] > 0) step.live_by_category[category] = per_step[static_cast<size_t>(s)];
    if (s < live.steps()) {
      step.node = live.schedule[static_cast<size_t>(s)];
      const Node& node = graph.node(step.node);
      step.node_name = node.name.empty() ? node.op : node.name;
    }
    largest_first(step.starts);
    largest_first(step.ends);
    if (step.live_bytes > ledger.peak_live_bytes) {
      ledger.peak_live_bytes = step.live_bytes;
      ledger.peak_step = s;
    }
    ledger.timeline.push_back(std::move(step));
  }
  ledger.peak_live_with_inputs_bytes = peak_of(live_per_step(live, InputCount::kWith));
  ledger.peak_live_without_inputs_bytes = peak_of(live_per_step(live, InputCount::kWithout));
  return ledger;
}

}  // namespace memledger
