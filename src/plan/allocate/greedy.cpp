#include "memledger/plan/allocate/greedy.h"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
#include <vector>

#include "dense_steps.h"
#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/plan/allocate/lower_bound.h"

namespace memledger::allocate {
namespace {

// Lifetimes renamed to indices of the distinct steps, so structures over time have 2n slots
// at most, however far apart the steps are.
struct CompressedTimes {
  std::vector<int32_t> lo, hi;  // buffer i covers elementary segments [lo[i], hi[i])
  int32_t segments = 0;
};

CompressedTimes compress_times(const Problem& problem) {
  std::vector<int64_t> steps;
  steps.reserve(2 * problem.buffers.size());
  for (const Buffer& b : problem.buffers) {
    steps.push_back(b.lower);
    steps.push_back(b.upper);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  CompressedTimes t;
  t.lo.resize(problem.buffers.size());
  t.hi.resize(problem.buffers.size());
  auto index_of = [&](int64_t step) {
    return static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    t.lo[i] = index_of(problem.buffers[i].lower);
    t.hi[i] = index_of(problem.buffers[i].upper);
  }
  t.segments = static_cast<int32_t>(std::max<size_t>(steps.size(), 1) - 1);
  return t;
}

// Range "raise to at least v" and range maximum over [l, r), both O(log n), without pushing
// tags down: a node's `tag` applies to its whole subtree and `max` covers the subtree
// including its own tag. Every node above a range's canonical nodes lies on the path from
// the range's first or last leaf to the root, so updates refresh those two paths and
// queries read the tags on them.
class SkylineTree {
 public:
  explicit SkylineTree(int32_t segments)
      : leaves_(std::bit_ceil(static_cast<uint32_t>(std::max(segments, 1)))), max_(2 * leaves_, 0), tag_(leaves_, 0) {}

  int64_t max(int32_t l, int32_t r) const {
    int64_t result = 0;
    for (uint32_t i = (l + leaves_) >> 1; i > 0; i >>= 1) result = std::max(result, tag_[i]);
    for (uint32_t i = (r - 1 + leaves_) >> 1; i > 0; i >>= 1) result = std::max(result, tag_[i]);
    for (uint32_t a = l + leaves_, b = r + leaves_; a < b; a >>= 1, b >>= 1) {
      if (a & 1) result = std::max(result, max_[a++]);
      if (b & 1) result = std::max(result, max_[--b]);
    }
    return result;
  }

  void raise(int32_t l, int32_t r, int64_t value) {
    for (uint32_t a = l + leaves_, b = r + leaves_; a < b; a >>= 1, b >>= 1) {
      if (a & 1) apply(a++, value);
      if (b & 1) apply(--b, value);
    }
    refresh(l + leaves_);
    refresh(r - 1 + leaves_);
  }

 private:
  void apply(uint32_t node, int64_t value) {
    max_[node] = std::max(max_[node], value);
    if (node < leaves_) tag_[node] = std::max(tag_[node], value);
  }
  void refresh(uint32_t leaf) {
    for (uint32_t i = leaf >> 1; i > 0; i >>= 1) max_[i] = std::max({max_[2 * i], max_[2 * i + 1], tag_[i]});
  }

  uint32_t leaves_;
  std::vector<int64_t> max_;
  std::vector<int64_t> tag_;
};

// rank[i]: the position of buffer i when sorted by `order` (ties by index).
// The keys are copied into one contiguous array before sorting: comparing through the
// buffers themselves (large, scattered) made the sorts of 10^6 buffers cache-bound.
template <typename Primary, typename KeyOf>
std::vector<int32_t> ranks_by(size_t n, KeyOf key_of) {
  struct Key {
    Primary primary;
    int64_t secondary;
    int32_t index;
    bool operator<(const Key& o) const {
      if (primary != o.primary) return primary < o.primary;
      if (secondary != o.secondary) return secondary < o.secondary;
      return index < o.index;
    }
  };
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) {
    const auto [primary, secondary] = key_of(i);
    keys[i] = {primary, secondary, static_cast<int32_t>(i)};
  }
  std::sort(keys.begin(), keys.end());
  std::vector<int32_t> rank(n);
  for (size_t r = 0; r < n; ++r) rank[keys[r].index] = static_cast<int32_t>(r);
  return rank;
}

std::vector<int32_t> ranks(const Problem& problem, GreedyOrder order) {
  const std::vector<Buffer>& bs = problem.buffers;
  auto duration = [&](size_t i) { return bs[i].upper - bs[i].lower; };
  switch (order) {
    case GreedyOrder::kSizeDesc:
      return ranks_by<int64_t>(bs.size(), [&](size_t i) { return std::pair(-bs[i].size, -duration(i)); });
    case GreedyOrder::kDurationDesc:
      return ranks_by<int64_t>(bs.size(), [&](size_t i) { return std::pair(-duration(i), -bs[i].size); });
    case GreedyOrder::kAreaDesc:
      // long double holds both factors exactly; their product rounds only beyond 2^64.
      return ranks_by<long double>(bs.size(), [&](size_t i) {
        return std::pair(-static_cast<long double>(bs[i].size) * static_cast<long double>(duration(i)), -bs[i].size);
      });
    case GreedyOrder::kLowerAsc:
      return ranks_by<int64_t>(bs.size(), [&](size_t i) { return std::pair(bs[i].lower, -bs[i].size); });
  }
  ML_CHECK(false, "unknown order");
}

// `max_requeues` < 0: no limit. Otherwise nothing is returned once more buffers than that
// were re-queued: many buffers live at once (20,000 graph outputs) re-queue each other
// after every placement, O(n^2 log n); the portfolio then leaves this run out.
std::optional<std::vector<int64_t>> bottom_up(const Problem& problem, GreedyOrder order, int64_t max_requeues) {
  const std::vector<Buffer>& bs = problem.buffers;
  const CompressedTimes t = compress_times(problem);
  const std::vector<int32_t> rank = ranks(problem, order);
  SkylineTree skyline(t.segments);
  std::vector<int64_t> offsets(bs.size(), 0);
  for (size_t i = 0; i < bs.size(); ++i) {
    if (bs[i].fixed_offset && bs[i].size > 0) {
      offsets[i] = *bs[i].fixed_offset;
      skyline.raise(t.lo[i], t.hi[i], offsets[i] + bs[i].size);
    }
  }
  auto lowest = [&](size_t i) { return align_up(skyline.max(t.lo[i], t.hi[i]), bs[i].alignment, "greedy offset"); };
  using Entry = std::tuple<int64_t, int32_t, int32_t>;  // (lowest offset known, rank, index)
  std::vector<Entry> heap;
  heap.reserve(bs.size());
  for (size_t i = 0; i < bs.size(); ++i) {
    if (bs[i].fixed_offset) {
      offsets[i] = *bs[i].fixed_offset;
    } else if (bs[i].size > 0) {
      heap.emplace_back(lowest(i), rank[i], static_cast<int32_t>(i));
    }
  }
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue(std::greater<>{}, std::move(heap));
  while (!queue.empty()) {
    auto [known, r, i] = queue.top();
    queue.pop();
    // Offsets only grow as buffers are placed, so a stale key is still a lower bound; only
    // the buffer on top needs its true lowest offset.
    const int64_t offset = lowest(i);
    if (offset > known) {
      if (max_requeues >= 0 && max_requeues-- == 0) return std::nullopt;
      queue.emplace(offset, r, i);
      continue;
    }
    offsets[i] = offset;
    skyline.raise(t.lo[i], t.hi[i], offset + bs[i].size);
  }
  return offsets;
}

// The holes below the top of a time-walking allocator, indexed by offset (to merge
// neighbours) and by size (to find the best fit).
class Holes {
 public:
  int64_t allocate(int64_t size, int64_t alignment) {
    constexpr int kCandidates = 16;  // misaligned holes tried before giving up to the top
    int tried = 0;
    for (auto it = by_size_.lower_bound({size, 0}); it != by_size_.end() && tried < kCandidates; ++it, ++tried) {
      const auto [hole_size, hole_offset] = *it;
      const int64_t offset = align_up(hole_offset, alignment, "greedy offset");
      if (offset + size > hole_offset + hole_size) continue;
      remove(hole_offset, hole_size);
      add(hole_offset, offset - hole_offset);
      add(offset + size, hole_offset + hole_size - offset - size);
      return offset;
    }
    const int64_t offset = align_up(top_, alignment, "greedy offset");
    add(top_, offset - top_);
    top_ = offset + size;
    high_water_ = std::max(high_water_, top_);
    return offset;
  }

  void release(int64_t offset, int64_t size) {
    auto next = by_offset_.find(offset + size);
    if (next != by_offset_.end()) {
      size += next->second;
      remove(next->first, next->second);
    }
    auto after = by_offset_.lower_bound(offset);
    if (after != by_offset_.begin()) {
      auto prev = std::prev(after);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        remove(prev->first, prev->second);
      }
    }
    if (offset + size == top_) {
      top_ = offset;
    } else {
      add(offset, size);
    }
  }

  int64_t high_water() const { return high_water_; }

 private:
  void add(int64_t offset, int64_t size) {
    if (size == 0) return;
    by_offset_.emplace(offset, size);
    by_size_.emplace(size, offset);
  }
  void remove(int64_t offset, int64_t size) {
    by_offset_.erase(offset);
    by_size_.erase({size, offset});
  }

  std::map<int64_t, int64_t> by_offset_;
  std::set<std::pair<int64_t, int64_t>> by_size_;
  int64_t top_ = 0;
  int64_t high_water_ = 0;
};

// Sorts `items` by step(item), keeping their order where steps are equal: by counting where the
// steps are dense (dense_steps.h), which at 10^6 buffers takes a fraction of a comparison sort's
// time, else by a stable sort.
template <typename T, typename StepOf>
void stable_sort_by_step(std::vector<T>& items, StepOf step_of) {
  if (items.empty()) return;
  int64_t first = step_of(items[0]), last = first;
  for (const T& item : items) {
    first = std::min(first, step_of(item));
    last = std::max(last, step_of(item));
  }
  const uint64_t span = static_cast<uint64_t>(last) - static_cast<uint64_t>(first);  // last >= first: no wrap
  if (!steps_are_dense(span, items.size())) {
    std::stable_sort(items.begin(), items.end(), [&](const T& a, const T& b) { return step_of(a) < step_of(b); });
    return;
  }
  auto slot = [&](const T& item) { return static_cast<uint64_t>(step_of(item)) - static_cast<uint64_t>(first); };
  std::vector<size_t> begin(span + 2, 0);  // begin[t + 1]: items at steps before first + t + 1, then where each goes
  for (const T& item : items) ++begin[slot(item) + 1];
  for (uint64_t t = 1; t < begin.size(); ++t) begin[t] += begin[t - 1];
  std::vector<T> sorted(items.size());
  for (const T& item : items) sorted[begin[slot(item)]++] = item;
  items = std::move(sorted);
}

std::vector<int64_t> sweep_best_fit(const Problem& problem, GreedyOrder order) {
  const std::vector<Buffer>& bs = problem.buffers;
  ML_CHECK(!has_fixed_offsets(problem), "the sweep does not take fixed offsets");
  const std::vector<int32_t> rank = ranks(problem, order);
  // Events carry what the sweep reads, so it walks two arrays instead of the buffers.
  struct Start {
    int64_t lower;
    int32_t rank, index;
    int64_t size, alignment;
  };
  struct End {
    int64_t upper;
    int32_t index;
    int64_t size;
  };
  // Starts by step, then rank (listed in rank order, sorted stably by step); ends by step, then
  // index (listed in index order).
  std::vector<int32_t> by_rank(bs.size());
  for (size_t i = 0; i < bs.size(); ++i) by_rank[rank[i]] = static_cast<int32_t>(i);
  std::vector<Start> starts;
  std::vector<End> ends;
  starts.reserve(bs.size());
  ends.reserve(bs.size());
  for (const int32_t i : by_rank) {
    if (bs[i].size > 0) starts.push_back({bs[i].lower, rank[i], i, bs[i].size, bs[i].alignment});
  }
  for (size_t i = 0; i < bs.size(); ++i) {
    if (bs[i].size > 0) ends.push_back({bs[i].upper, static_cast<int32_t>(i), bs[i].size});
  }
  stable_sort_by_step(starts, [](const Start& s) { return s.lower; });
  stable_sort_by_step(ends, [](const End& e) { return e.upper; });
  std::vector<int64_t> offsets(bs.size(), 0);
  Holes holes;
  size_t e = 0;
  for (const Start& start : starts) {
    for (; e < ends.size() && ends[e].upper <= start.lower; ++e) holes.release(offsets[ends[e].index], ends[e].size);
    offsets[start.index] = holes.allocate(start.size, start.alignment);
  }
  return offsets;
}

constexpr std::array kFullPortfolio = {
    GreedyRun{GreedyStrategy::kBottomUp, GreedyOrder::kSizeDesc},
    GreedyRun{GreedyStrategy::kBottomUp, GreedyOrder::kAreaDesc},
    GreedyRun{GreedyStrategy::kBottomUp, GreedyOrder::kDurationDesc},
    GreedyRun{GreedyStrategy::kBottomUp, GreedyOrder::kLowerAsc},
    GreedyRun{GreedyStrategy::kSweepBestFit, GreedyOrder::kSizeDesc},
    GreedyRun{GreedyStrategy::kSweepBestFit, GreedyOrder::kDurationDesc},
};
// From here on the sweep alone: bottom-up re-queues a buffer each time the skyline over its
// lifetime rises, which on large random problems costs ~10x the sweep (see
// bench/plan/greedy_scale_bench.cpp).
constexpr size_t kLargeProblem = 100'000;
static_assert(kFullPortfolio[4].strategy == GreedyStrategy::kSweepBestFit);

std::optional<Solution> run_one(const Problem& problem, GreedyRun run, int64_t bound, int64_t max_requeues = -1) {
  Solution solution;
  solution.algorithm = fmt::format("greedy {}/{}", to_string(run.strategy), to_string(run.order));
  if (run.strategy == GreedyStrategy::kBottomUp) {
    auto offsets = bottom_up(problem, run.order, max_requeues);
    if (!offsets) return std::nullopt;
    solution.offsets = std::move(*offsets);
  } else {
    solution.offsets = sweep_best_fit(problem, run.order);
  }
  solution.arena_bytes = arena_bytes(problem, solution.offsets);
  solution.optimal = solution.arena_bytes == bound;
  return solution;
}

}  // namespace

std::string to_string(GreedyStrategy strategy) {
  switch (strategy) {
    case GreedyStrategy::kBottomUp:
      return "bottom-up";
    case GreedyStrategy::kSweepBestFit:
      return "sweep-best-fit";
  }
  ML_CHECK(false, "unknown strategy");
}

std::string to_string(GreedyOrder order) {
  switch (order) {
    case GreedyOrder::kSizeDesc:
      return "size";
    case GreedyOrder::kDurationDesc:
      return "duration";
    case GreedyOrder::kAreaDesc:
      return "area";
    case GreedyOrder::kLowerAsc:
      return "lower";
  }
  ML_CHECK(false, "unknown order");
}

std::span<const GreedyRun> greedy_portfolio(size_t n) {
  if (n < kLargeProblem) return kFullPortfolio;
  return std::span(kFullPortfolio).subspan(4, 1);
}

Solution plan_greedy(const Problem& problem, GreedyRun run) {
  if (run.strategy == GreedyStrategy::kSweepBestFit && has_fixed_offsets(problem)) {
    fail("the sweep best-fit heuristic does not take fixed offsets");
  }
  return *run_one(problem, run, lower_bound(problem).bytes);
}

Solution plan_greedy(const Problem& problem) {
  const int64_t bound = lower_bound(problem).bytes;
  const bool fixed = has_fixed_offsets(problem);
  Solution best;
  // Without fixed offsets the sweep (O(n log n)) is in the portfolio, so a bottom-up run
  // may give up; with them bottom-up is all there is.
  const int64_t max_requeues = fixed ? -1 : 16 * static_cast<int64_t>(problem.buffers.size()) + 4096;
  for (const GreedyRun& run : greedy_portfolio(problem.buffers.size())) {
    if (fixed && run.strategy == GreedyStrategy::kSweepBestFit) continue;
    std::optional<Solution> solution = run_one(problem, run, bound, max_requeues);
    if (!solution) continue;
    if (best.algorithm.empty() || solution->arena_bytes < best.arena_bytes) best = std::move(*solution);
    if (best.optimal) break;
  }
  return best;
}

}  // namespace memledger::allocate
