#include "memledger/plan/allocate/perfect_packing.h"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <tuple>

#include "memledger/core/error.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;

// The buffers of size > 0 with lifetimes as ranges of sections (the spans between
// consecutive distinct steps), optionally mirrored in time.
struct Tight {
  std::vector<int32_t> index;  // into problem.buffers
  std::vector<int64_t> size, alignment;
  std::vector<int32_t> lo, hi;  // sections [lo, hi)
  int32_t sections = 0;
};

// Returns false unless every section holds exactly `capacity`.
bool build_tight(const Problem& problem, int64_t capacity, Tight& t) {
  std::vector<int64_t> steps;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    if (b.fixed_offset) return false;
    if (b.size == 0) continue;
    t.index.push_back(static_cast<int32_t>(i));
    t.size.push_back(b.size);
    t.alignment.push_back(b.alignment);
    steps.push_back(b.lower);
    steps.push_back(b.upper);
  }
  if (t.index.empty() || capacity <= 0) return false;
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  t.sections = static_cast<int32_t>(steps.size()) - 1;
  std::vector<int64_t> delta(steps.size(), 0);
  for (size_t k = 0; k < t.index.size(); ++k) {
    const Buffer& b = problem.buffers[t.index[k]];
    t.lo.push_back(static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), b.lower) - steps.begin()));
    t.hi.push_back(static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), b.upper) - steps.begin()));
    if (b.size > capacity) return false;
    delta[t.lo.back()] += b.size;  // no overflow: check_problem bounds the sum of all sizes
    delta[t.hi.back()] -= b.size;
  }
  int64_t live = 0;
  for (int32_t s = 0; s < t.sections; ++s) {
    live += delta[s];
    if (live != capacity) return false;
  }
  return true;
}

Tight mirrored_in_time(const Tight& t) {
  Tight m = t;
  for (size_t k = 0; k < t.index.size(); ++k) {
    m.lo[k] = t.sections - t.hi[k];
    m.hi[k] = t.sections - t.lo[k];
  }
  return m;
}

// The order in which buffers that start in one section are tried.
enum class Branching { kSizeFirst, kLengthFirst };

enum class Outcome { kFound, kInfeasible, kNodeLimit, kTimeout };

class Skyline {
 public:
  Skyline(const Tight& t, int64_t capacity, Branching branching, uint64_t seed, Clock::time_point deadline,
          const std::function<void(int64_t)>& on_tick, int64_t nodes_before)
      : t_(t),
        random_(seed),
        capacity_(capacity),
        deadline_(deadline),
        on_tick_(on_tick),
        nodes_before_(nodes_before),
        height_(t.sections, 0),
        offset_(t.index.size(), -1),
        starters_(t.sections),
        twin_before_(t.index.size(), -1),
        enders_(t.sections),
        reach_(t.sections + 1, 0),
        depth_(t.sections + 1, 0),
        candidates_(t.index.size() + 1) {
    std::vector<int32_t> order(t.index.size());
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int32_t k) {
      return branching == Branching::kSizeFirst ? std::tuple(t.size[k], int64_t{t.hi[k]}, t.alignment[k])
                                                : std::tuple(int64_t{t.hi[k]}, t.size[k], t.alignment[k]);
    };
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return key(a) > key(b); });
    for (const int32_t k : order) {
      enders_[t.hi[k] - 1].push_back(k);
      std::vector<int32_t>& list = starters_[t.lo[k]];
      // Identical buffers are adjacent in the list; each waits for the one before it.
      if (!list.empty() && identical(list.back(), k)) twin_before_[k] = list.back();
      list.push_back(k);
    }
  }

  Outcome run(int64_t node_limit) {
    node_limit_ = node_limit;
    return search(0);
  }

  const std::vector<int64_t>& offsets() const { return offset_; }
  int64_t nodes() const { return nodes_; }

 private:
  // Identical buffers are interchangeable: each waits for the one before it.
  bool waits_for_twin(int32_t k) const { return twin_before_[k] >= 0 && offset_[twin_before_[k]] < 0; }

  bool identical(int32_t a, int32_t b) const {
    return t_.lo[a] == t_.lo[b] && t_.hi[a] == t_.hi[b] && t_.size[a] == t_.size[b] &&
           t_.alignment[a] == t_.alignment[b];
  }

  // Whether buffer k may go at offset `floor` in a well of the given end.
  bool fits(int32_t k, int64_t floor, int32_t end) const {
    return offset_[k] < 0 && t_.hi[k] <= end && t_.size[k] <= capacity_ - floor && floor % t_.alignment[k] == 0;
  }

  Outcome search(size_t placed) {
    if (placed == t_.index.size()) return Outcome::kFound;
    if (++nodes_ > node_limit_) return Outcome::kNodeLimit;
    if ((nodes_ & 1023) == 0) {
      if (on_tick_) on_tick_(nodes_before_ + nodes_);
      if (Clock::now() > deadline_) return Outcome::kTimeout;
    }
    // Every gap is checked, and the search branches at the closed well with the fewest
    // buffers able to cover its first byte (ties: the lowest, then the earliest). The
    // lowest plateau is always a closed well, so one is found while anything is unplaced.
    int32_t s = -1, end = 0;
    int32_t fewest = std::numeric_limits<int32_t>::max();
    int64_t lowest = capacity_;
    for (int32_t first = 0; first < t_.sections;) {
      const int64_t floor = height_[first];
      int32_t e = first + 1;
      while (e < t_.sections && height_[e] == floor) ++e;
      const bool left_closed = first == 0 || height_[first - 1] > floor;
      const bool right_closed = e == t_.sections || height_[e] > floor;
      if (floor < capacity_ && !left_closed && right_closed && !ender_exists(e - 1, floor)) {
        return Outcome::kInfeasible;
      }
      if (floor < capacity_ && left_closed) {
        if (!well_fillable(first)) return Outcome::kInfeasible;
        if (right_closed) {
          int32_t count = 0;
          for (const int32_t k : starters_[first]) {
            if (fits(k, floor, e) && !waits_for_twin(k)) ++count;
          }
          if (count < fewest || (count == fewest && floor < lowest)) {
            fewest = count;
            lowest = floor;
            s = first;
            end = e;
          }
        }
      }
      first = e;
    }
    ML_CHECK(s >= 0, "no closed well with {} of {} buffers placed", placed, t_.index.size());
    const int64_t floor = height_[s];
    std::vector<std::pair<int32_t, int32_t>>& candidates = candidates_[placed];
    candidates.clear();
    const int64_t left_wall = s > 0 ? height_[s - 1] : -1;
    const int64_t right_wall = end < t_.sections ? height_[end] : -1;
    int32_t position = 0;
    for (const int32_t k : starters_[s]) {
      ++position;
      if (!fits(k, floor, end)) continue;
      if (waits_for_twin(k)) continue;
      // Flush edges first: a buffer that fills the well's width, or whose top meets a wall,
      // leaves no new step behind (cut-like solutions are full of such edges).
      const int64_t top = floor + t_.size[k];
      const int32_t flush =
          (t_.hi[k] == end ? 2 : 0) + (top == left_wall ? 2 : 0) + (t_.hi[k] == end && top == right_wall ? 1 : 0);
      candidates.emplace_back(-flush * (1 << 24) + (random_ ? jitter(position) : position), k);
    }
    std::sort(candidates.begin(), candidates.end());
    for (const auto& [key, k] : candidates) {
      const int64_t top = floor + t_.size[k];
      std::fill(height_.begin() + s, height_.begin() + t_.hi[k], top);
      offset_[k] = floor;
      const Outcome outcome = search(placed + 1);
      if (outcome == Outcome::kFound) return outcome;
      offset_[k] = -1;
      std::fill(height_.begin() + s, height_.begin() + t_.hi[k], floor);
      if (outcome != Outcome::kInfeasible) return outcome;
    }
    return Outcome::kInfeasible;
  }

  // A plateau higher than the section before it and lower than the one after: the buffer
  // that covers its last section's next byte ends there.
  // It cannot reach back past a section already higher than the plateau.
  bool ender_exists(int32_t last, int64_t floor) const {
    int32_t wall = last;
    while (wall >= 0 && height_[wall] <= floor) --wall;
    for (const int32_t k : enders_[last]) {
      if (offset_[k] < 0 && t_.lo[k] > wall && t_.size[k] <= capacity_ - floor && floor % t_.alignment[k] == 0) {
        return true;
      }
    }
    return false;
  }

  // The plateau starting at `first` is lower than the section before it, so the next
  // buffer here starts at `first` exactly. If the section after the plateau is higher, the
  // whole floor must be tiled in time by buffers that start and end within the plateau.
  bool well_fillable(int32_t first) {
    const int64_t floor = height_[first];
    if (floor == capacity_) return true;
    int32_t end = first + 1;
    while (end < t_.sections && height_[end] == floor) ++end;
    const bool closed = end == t_.sections || height_[end] > floor;
    if (!closed) {  // lower sections follow; the buffer stops before a higher one
      int32_t wall = end;
      while (wall < t_.sections && height_[wall] <= floor) ++wall;
      for (const int32_t k : starters_[first]) {
        if (fits(k, floor, wall)) return true;
      }
      return false;
    }
    std::fill(reach_.begin() + first, reach_.begin() + end + 1, 0);
    reach_[first] = 1;
    for (int32_t s = first; s < end; ++s) {
      if (!reach_[s]) continue;
      for (const int32_t k : starters_[s]) {
        if (fits(k, floor, end)) reach_[t_.hi[k]] = 1;
      }
    }
    if (!reach_[end]) return false;
    // Up to the lower wall, every section of the well holds only buffers that live within
    // the well (any other one meets a wall section, so it sits at or above that wall).
    const int64_t wall =
        std::min(first > 0 ? height_[first - 1] : capacity_, end < t_.sections ? height_[end] : capacity_);
    // depth_ holds differences: + size where a buffer starts, - size where it ends.
    std::fill(depth_.begin() + first, depth_.begin() + end + 1, 0);
    for (int32_t s = first; s < end; ++s) {
      for (const int32_t k : starters_[s]) {
        if (offset_[k] >= 0 || t_.hi[k] > end) continue;
        depth_[s] += t_.size[k];
        depth_[t_.hi[k]] -= t_.size[k];
      }
    }
    int64_t depth = 0;
    for (int32_t s = first; s < end; ++s) {
      depth += depth_[s];
      if (depth < wall - floor) return false;
    }
    return true;
  }

  // SplitMix64 over the seed: a perturbed branching order for restarts (0: none). Each
  // buffer may move up to 15 places (up to 2 solved fewer hard instances in our runs).
  int32_t jitter(int32_t position) {
    uint64_t z = (random_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return position + static_cast<int32_t>(z % 16);
  }

  const Tight& t_;
  uint64_t random_;
  const int64_t capacity_;
  const Clock::time_point deadline_;
  const std::function<void(int64_t)>& on_tick_;
  const int64_t nodes_before_;
  std::vector<int64_t> height_;                 // per section: bytes filled from 0
  std::vector<int64_t> offset_;                 // -1: unplaced
  std::vector<std::vector<int32_t>> starters_;  // per section: buffers starting there, in branching order
  std::vector<int32_t> twin_before_;            // the identical buffer placed before this one, or -1
  std::vector<std::vector<int32_t>> enders_;    // per section: buffers whose last section it is
  std::vector<char> reach_;                     // scratch for well_fillable
  std::vector<int64_t> depth_;                  // scratch for well_fillable
  std::vector<std::vector<std::pair<int32_t, int32_t>>> candidates_;  // per depth: (order key, buffer)
  int64_t nodes_ = 0;
  int64_t node_limit_ = 0;
};

// The Luby sequence 1 1 2 1 1 2 4 1 1 2 ...: restart limits with a bounded loss against
// the best fixed limit, and unbounded, so the last search always completes.
uint64_t luby(uint64_t i) {
  for (uint64_t k = 1;; ++k) {
    if (i == (uint64_t{1} << k) - 1) return uint64_t{1} << (k - 1);
    if (i < (uint64_t{1} << k) - 1) return luby(i - (uint64_t{1} << (k - 1)) + 1);
  }
}

}  // namespace

bool is_tight(const Problem& problem, int64_t capacity) {
  Tight t;
  return build_tight(problem, capacity, t);
}

PerfectPackingResult find_perfect_packing(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                                          const std::function<void(int64_t nodes)>& on_tick) {
  PerfectPackingResult result;
  Tight forward;
  if (!build_tight(problem, capacity, forward) || forward.index.size() > kPerfectPackingMaxBuffers) return result;
  const Tight backward = mirrored_in_time(forward);
  struct Variant {
    const Tight* tight;
    Branching branching;
  };
  const std::array variants = {Variant{&forward, Branching::kSizeFirst}, Variant{&backward, Branching::kSizeFirst},
                               Variant{&forward, Branching::kLengthFirst}, Variant{&backward, Branching::kLengthFirst}};
  result.outcome = PerfectPackingResult::Outcome::kTimeout;
  const int64_t unit = std::max<int64_t>(8 * static_cast<int64_t>(forward.index.size()), 4096);
  for (uint64_t round = 0;; ++round) {
    const int64_t limit = unit * static_cast<int64_t>(luby(round + 1));
    const Variant& v = variants[round % variants.size()];
    Skyline search(*v.tight, capacity, v.branching, round < variants.size() ? 0 : round, deadline, on_tick,
                   result.nodes);
    const Outcome outcome = search.run(limit);
    result.nodes += search.nodes();
    switch (outcome) {
      case Outcome::kFound:
        result.outcome = PerfectPackingResult::Outcome::kFound;
        result.offsets.assign(problem.buffers.size(), 0);
        for (size_t k = 0; k < forward.index.size(); ++k) {
          result.offsets[forward.index[k]] = search.offsets()[k];
        }
        return result;
      case Outcome::kInfeasible:
        result.outcome = PerfectPackingResult::Outcome::kInfeasible;
        return result;
      case Outcome::kTimeout:
        return result;
      case Outcome::kNodeLimit:
        ++result.restarts;
        break;
    }
    if (Clock::now() > deadline) return result;
  }
}

}  // namespace memledger::allocate
