#include "memledger/plan/allocate/order_search.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "memledger/plan/allocate/greedy.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;

// Above this many buffers the neighbour lists (every pair of buffers live together) may not
// fit in memory or time; the exact searches and greedy keep those problems.
constexpr size_t kMaxBuffers = 20'000;
constexpr size_t kMaxPairs = 8'000'000;
constexpr int kHistory = 64;  // late-acceptance length

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int64_t align_up(int64_t offset, int64_t alignment) { return (offset + alignment - 1) / alignment * alignment; }

class OrderSearch {
 public:
  OrderSearch(const Problem& problem, int64_t capacity, uint64_t seed)
      : p_(problem), capacity_(capacity), rng_(seed), n_(problem.buffers.size()) {}

  // The buffers live together with each buffer of size > 0; false when there are too many.
  bool build_neighbours() {
    std::vector<int32_t> by_lower(n_);
    std::iota(by_lower.begin(), by_lower.end(), 0);
    std::sort(by_lower.begin(), by_lower.end(),
              [&](int32_t a, int32_t b) { return p_.buffers[a].lower < p_.buffers[b].lower; });
    neighbours_.assign(n_, {});
    size_t pairs = 0;
    for (size_t x = 0; x < n_; ++x) {
      const Buffer& a = p_.buffers[by_lower[x]];
      if (a.size == 0) continue;
      for (size_t y = x + 1; y < n_ && p_.buffers[by_lower[y]].lower < a.upper; ++y) {
        if (p_.buffers[by_lower[y]].size == 0) continue;
        neighbours_[by_lower[x]].push_back(by_lower[y]);
        neighbours_[by_lower[y]].push_back(by_lower[x]);
        if (++pairs > kMaxPairs) return false;
      }
    }
    return true;
  }

  OrderSearchResult run(const std::vector<int64_t>& start, const OrderSearchOptions& options) {
    OrderSearchResult result;
    order_.resize(n_);
    std::iota(order_.begin(), order_.end(), 0);
    std::sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
      if (start[a] != start[b]) return start[a] < start[b];
      return p_.buffers[a].size > p_.buffers[b].size;
    });
    pos_.resize(n_);
    for (size_t k = 0; k < n_; ++k) pos_[order_[k]] = static_cast<int32_t>(k);
    offset_.assign(n_, 0);
    decode_from(0);
    int64_t current = overflow();
    int64_t best = current;
    result.offsets = offset_;
    std::vector<int64_t> history(kHistory, current);
    std::vector<int64_t> saved_offset(n_);
    std::vector<int32_t> above;
    int64_t rounds = 0;
    while (best > 0) {
      if (options.max_rounds >= 0 && rounds >= options.max_rounds) break;
      if ((rounds & 63) == 0 && options.deadline && Clock::now() >= *options.deadline) break;
      if ((rounds & 1023) == 0 && options.on_tick) options.on_tick(rounds);
      ++rounds;
      above.clear();
      for (size_t b = 0; b < n_; ++b) {
        if (offset_[b] + p_.buffers[b].size > capacity_) above.push_back(static_cast<int32_t>(b));
      }
      const int32_t b = above[splitmix(rng_) % above.size()];
      const int32_t j = pos_[b];
      if (j == 0) continue;
      const int32_t i = target_position(b, j);
      saved_offset = offset_;
      move_earlier(i, j);
      decode_from(i);
      const int64_t candidate = overflow();
      int64_t& late = history[rounds % kHistory];
      if (candidate <= current || candidate <= late) {
        current = candidate;
        if (current < best) {
          best = current;
          result.offsets = offset_;
        }
      } else {
        move_later(i, j);
        offset_ = saved_offset;
      }
      late = current;
    }
    result.found = best == 0;
    result.arena_bytes = arena_bytes(p_, result.offsets);
    result.rounds = rounds;
    return result;
  }

  // Large-neighbourhood repair from a valid placement: the buffers live at one step of an
  // overflowing buffer are taken out and placed again, the others fixed, by a small
  // branch-and-bound over first-fit orders (offsets non-decreasing in the order); the best
  // re-placement is kept when its overflow is no worse.
  OrderSearchResult repair(const std::vector<int64_t>& start, const OrderSearchOptions& options) {
    OrderSearchResult result;
    offset_ = start;
    placed_.assign(n_, 1);
    int64_t current = 0;
    for (size_t b = 0; b < n_; ++b) current += overflow_of(static_cast<int32_t>(b));
    int64_t best = current;
    result.offsets = offset_;
    std::vector<int32_t> above, free;
    int64_t rounds = 0;
    while (best > 0) {
      if (options.max_rounds >= 0 && rounds >= options.max_rounds) break;
      if ((rounds & 15) == 0 && options.deadline && Clock::now() >= *options.deadline) break;
      if ((rounds & 255) == 0 && options.on_tick) options.on_tick(rounds);
      ++rounds;
      above.clear();
      for (size_t b = 0; b < n_; ++b) {
        if (offset_[b] + p_.buffers[b].size > capacity_) above.push_back(static_cast<int32_t>(b));
      }
      const int32_t b = above[splitmix(rng_) % above.size()];
      const Buffer& pick = p_.buffers[b];
      const int64_t step =
          pick.lower + static_cast<int64_t>(splitmix(rng_) % static_cast<uint64_t>(pick.upper - pick.lower));
      free.clear();
      free.push_back(b);
      for (const int32_t other : neighbours_[b]) {
        if (p_.buffers[other].lower <= step && step < p_.buffers[other].upper) free.push_back(other);
      }
      // Too many: keep those above the capacity and a random share of the rest.
      for (size_t k = 1; k < free.size(); ++k) std::swap(free[k], free[1 + splitmix(rng_) % k]);
      std::stable_partition(free.begin(), free.end(),
                            [&](int32_t x) { return offset_[x] + p_.buffers[x].size > capacity_; });
      if (free.size() > static_cast<size_t>(kFree)) free.resize(kFree);
      int64_t before = 0;
      for (const int32_t x : free) before += overflow_of(x);
      saved_.clear();
      for (const int32_t x : free) saved_.push_back(offset_[x]);
      for (const int32_t x : free) placed_[x] = 0;
      sub_free_ = free;
      sub_best_ = before + 1;  // anything no worse than before
      sub_best_offsets_.clear();
      sub_nodes_ = 0;
      sub_search(0, 0, 0);
      if (!sub_best_offsets_.empty()) {
        for (size_t k = 0; k < free.size(); ++k) offset_[free[k]] = sub_best_offsets_[k];
        current += sub_best_ - before;
      } else {
        for (size_t k = 0; k < free.size(); ++k) offset_[free[k]] = saved_[k];
      }
      for (const int32_t x : free) placed_[x] = 1;
      if (current < best) {
        best = current;
        result.offsets = offset_;
      }
    }
    result.found = best == 0;
    result.arena_bytes = arena_bytes(p_, result.offsets);
    result.rounds = rounds;
    return result;
  }

 private:
  static constexpr int kFree = 24;
  static constexpr int64_t kSubNodes = 2000;

  int64_t overflow_of(int32_t b) const {
    const Buffer& buffer = p_.buffers[b];
    const int64_t top = offset_[b] + buffer.size;
    return top > capacity_ ? (top - std::max(offset_[b], capacity_)) * (buffer.upper - buffer.lower) : 0;
  }

  // Places the free buffers not placed yet, each at its first fit at or above `floor`;
  // `cost` is the overflow of those placed so far.
  void sub_search(size_t placed, int64_t floor, int64_t cost) {
    if (++sub_nodes_ > kSubNodes || cost >= sub_best_) return;
    if (placed == sub_free_.size()) {
      sub_best_ = cost;
      sub_best_offsets_.clear();
      for (const int32_t x : sub_free_) sub_best_offsets_.push_back(offset_[x]);
      return;
    }
    // Children: every unplaced free buffer at its first fit, lowest first.
    std::vector<std::pair<int64_t, int32_t>> children;
    for (const int32_t x : sub_free_) {
      if (placed_[x]) continue;
      const int64_t at = first_fit_placed(x);
      if (at < floor) continue;  // reached by another order
      children.emplace_back(at, x);
    }
    std::sort(children.begin(), children.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return p_.buffers[a.second].size > p_.buffers[b.second].size;
    });
    for (const auto& [at, x] : children) {
      offset_[x] = at;
      placed_[x] = 1;
      sub_search(placed + 1, at, cost + overflow_of(x));
      placed_[x] = 0;
      if (sub_nodes_ > kSubNodes || sub_best_ == 0) return;
    }
  }

  int64_t first_fit_placed(int32_t b) {
    const Buffer& buffer = p_.buffers[b];
    if (buffer.size == 0) return 0;
    taken_.clear();
    for (const int32_t other : neighbours_[b]) {
      if (placed_[other]) taken_.emplace_back(offset_[other], offset_[other] + p_.buffers[other].size);
    }
    std::sort(taken_.begin(), taken_.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : taken_) {
      if (lo >= offset + buffer.size) break;
      if (hi > offset) offset = align_up(hi, buffer.alignment);
    }
    return offset;
  }

  // Right before a random one of the buffers placed before `b` that it meets in time, or
  // (half of the time, and when there is none) a random earlier position.
  int32_t target_position(int32_t b, int32_t j) {
    const std::vector<int32_t>& nb = neighbours_[b];
    if (!nb.empty() && (splitmix(rng_) & 1)) {
      for (int tries = 0; tries < 4; ++tries) {
        const int32_t other = nb[splitmix(rng_) % nb.size()];
        if (pos_[other] < j) return pos_[other];
      }
    }
    return static_cast<int32_t>(splitmix(rng_) % static_cast<uint64_t>(j));
  }

  // The buffer at position j goes to position i < j; those between move one later.
  void move_earlier(int32_t i, int32_t j) {
    std::rotate(order_.begin() + i, order_.begin() + j, order_.begin() + j + 1);
    for (int32_t k = i; k <= j; ++k) pos_[order_[k]] = k;
  }
  void move_later(int32_t i, int32_t j) {
    std::rotate(order_.begin() + i, order_.begin() + i + 1, order_.begin() + j + 1);
    for (int32_t k = i; k <= j; ++k) pos_[order_[k]] = k;
  }

  void decode_from(int32_t from) {
    for (size_t k = static_cast<size_t>(from); k < n_; ++k) offset_[order_[k]] = first_fit(order_[k]);
  }

  // The lowest aligned offset at which buffer b meets none of the buffers placed before it.
  int64_t first_fit(int32_t b) {
    const Buffer& buffer = p_.buffers[b];
    if (buffer.size == 0) return 0;
    taken_.clear();
    for (const int32_t other : neighbours_[b]) {
      if (pos_[other] < pos_[b]) taken_.emplace_back(offset_[other], offset_[other] + p_.buffers[other].size);
    }
    std::sort(taken_.begin(), taken_.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : taken_) {
      if (lo >= offset + buffer.size) break;
      if (hi > offset) offset = align_up(hi, buffer.alignment);
    }
    return offset;
  }

  // The arena above the capacity first, then the bytes × steps of every buffer above it.
  int64_t overflow() const {
    int64_t total = 0, arena = 0;
    for (size_t b = 0; b < n_; ++b) {
      const Buffer& buffer = p_.buffers[b];
      const int64_t top = offset_[b] + buffer.size;
      arena = std::max(arena, top);
      if (top > capacity_) total += (top - std::max(offset_[b], capacity_)) * (buffer.upper - buffer.lower);
    }
    return total > 0 ? (arena - capacity_) * (int64_t{1} << 40) + total : 0;
  }

  const Problem& p_;
  const int64_t capacity_;
  uint64_t rng_;
  const size_t n_;
  std::vector<std::vector<int32_t>> neighbours_;
  std::vector<int32_t> order_, pos_;
  std::vector<int64_t> offset_;
  std::vector<std::pair<int64_t, int64_t>> taken_;
  std::vector<char> placed_;
  std::vector<int32_t> sub_free_;
  std::vector<int64_t> saved_, sub_best_offsets_;
  int64_t sub_best_ = 0, sub_nodes_ = 0;
};

}  // namespace

OrderSearchResult search_orders(const Problem& problem, int64_t capacity, const OrderSearchOptions& options,
                                const std::vector<int64_t>* start) {
  OrderSearchResult none;
  if (has_fixed_offsets(problem) || problem.buffers.size() > kMaxBuffers) return none;
  std::vector<int64_t> greedy;
  if (!start) {
    greedy = plan_greedy(problem).offsets;
    start = &greedy;
  }
  OrderSearch search(problem, capacity, options.seed);
  if (!search.build_neighbours()) {
    none.offsets = *start;
    none.arena_bytes = arena_bytes(problem, *start);
    none.found = none.arena_bytes <= capacity;
    return none;
  }
  return options.repair ? search.repair(*start, options) : search.run(*start, options);
}

}  // namespace memledger::allocate
