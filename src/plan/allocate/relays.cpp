#include "memledger/plan/allocate/relays.h"

#include <map>
#include <tuple>
#include <utility>

namespace memledger::allocate {

Relays join_relays(const Problem& problem) {
  const std::vector<Buffer>& buffers = problem.buffers;
  // Per (step, size, alignment): the buffers that end there and those that start there.
  using Key = std::tuple<int64_t, int64_t, int64_t>;
  std::map<Key, std::pair<std::vector<size_t>, std::vector<size_t>>> meeting;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.size == 0 || b.fixed_offset) continue;
    meeting[{b.upper, b.size, b.alignment}].first.push_back(i);
    meeting[{b.lower, b.size, b.alignment}].second.push_back(i);
  }
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> next(buffers.size(), kNone), previous(buffers.size(), kNone);
  Relays relays;
  for (const auto& [key, ends_starts] : meeting) {
    const auto& [ending, starting] = ends_starts;
    if (ending.size() != 1 || starting.size() != 1) continue;  // none, or which hands to which is unclear
    next[ending[0]] = starting[0];
    previous[starting[0]] = ending[0];
    ++relays.joined_pairs;
  }
  relays.run_of.assign(buffers.size(), kNone);
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (previous[i] != kNone) continue;  // runs are walked from their first buffer
    Buffer run = buffers[i];
    const size_t index = relays.joined.buffers.size();
    for (size_t k = i; k != kNone; k = next[k]) {
      relays.run_of[k] = index;
      run.upper = buffers[k].upper;
    }
    relays.joined.buffers.push_back(std::move(run));
  }
  return relays;
}

std::vector<int64_t> relay_offsets(const Relays& relays, const std::vector<int64_t>& joined_offsets) {
  std::vector<int64_t> offsets(relays.run_of.size());
  for (size_t i = 0; i < offsets.size(); ++i) offsets[i] = joined_offsets[relays.run_of[i]];
  return offsets;
}

}  // namespace memledger::allocate
