#include "memledger/plan/allocate/decision_search.h"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <tuple>

#include "memledger/core/error.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kWall = std::numeric_limits<int64_t>::max();  // beyond the partition: never lower

// The buffers of size > 0, their lifetimes as ranges of sections (the spans between
// consecutive distinct steps), sizes counted in `unit` bytes.
struct Shape {
  std::vector<int32_t> index;  // into problem.buffers
  std::vector<int64_t> size, alignment;
  std::vector<int32_t> lo, hi;  // sections [lo, hi)
  int32_t sections = 0;
  int64_t unit = 1;
  bool complete = true;  // every alignment divides the unit
};

Shape build_shape(const Problem& problem) {
  Shape s;
  std::vector<int64_t> steps;
  int64_t unit = 0;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    if (b.size == 0) continue;
    s.index.push_back(static_cast<int32_t>(i));
    steps.push_back(b.lower);
    steps.push_back(b.upper);
    unit = std::gcd(unit, b.size);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  s.sections = static_cast<int32_t>(std::max<size_t>(steps.size(), 1) - 1);
  s.complete = true;
  for (const int32_t i : s.index) s.complete = s.complete && unit % problem.buffers[i].alignment == 0;
  s.unit = s.complete && unit > 0 ? unit : 1;
  for (const int32_t i : s.index) {
    const Buffer& b = problem.buffers[i];
    s.size.push_back(b.size / s.unit);
    s.alignment.push_back(s.complete ? 1 : b.alignment);
    s.lo.push_back(static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), b.lower) - steps.begin()));
    s.hi.push_back(static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), b.upper) - steps.begin()));
  }
  return s;
}

Shape mirrored_in_time(const Shape& s) {
  Shape m = s;
  for (size_t k = 0; k < s.index.size(); ++k) {
    m.lo[k] = s.sections - s.hi[k];
    m.hi[k] = s.sections - s.lo[k];
  }
  return m;
}

enum class Branching { kSizeFirst, kLengthFirst };
// kTooDeep: the recursion reached kMaxDepth levels (one or more per placed buffer and per
// raised floor); the search gives up rather than overflow the stack (it did under ASan on
// a patched mobilenet_v2's plan), and the caller keeps its greedy placement.
enum class Outcome { kFound, kInfeasible, kNodeLimit, kTimeout, kTooDeep };
constexpr int32_t kMaxDepth = 1500;

class WellSearch {
 public:
  WellSearch(const Shape& s, int64_t capacity, Branching branching, uint64_t seed, Clock::time_point deadline,
             const std::function<void(int64_t)>& on_tick, int64_t nodes_before)
      : s_(s),
        random_(seed),
        capacity_(capacity),
        deadline_(deadline),
        on_tick_(on_tick),
        nodes_before_(nodes_before),
        height_(s.sections, 0),
        remaining_(s.sections, 0),
        empty_at_(s.sections, -1),
        cuts_(std::max(s.sections - 1, 0), 0),
        offset_(s.index.size(), -1),
        solution_(s.index.size(), 0),
        starters_(s.sections),
        twin_before_(s.index.size(), -1),
        within_(s.sections + 1, 0),
        reach_(s.sections + 1, 0),
        candidates_(s.index.size() + 2) {
    std::vector<int32_t> order(s.index.size());
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int32_t k) {
      return branching == Branching::kSizeFirst ? std::tuple(s.size[k], int64_t{s.hi[k]}, s.alignment[k])
                                                : std::tuple(int64_t{s.hi[k]}, s.size[k], s.alignment[k]);
    };
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return key(a) > key(b); });
    for (const int32_t k : order) {
      std::vector<int32_t>& list = starters_[s.lo[k]];
      if (!list.empty() && identical(list.back(), k)) twin_before_[k] = list.back();
      list.push_back(k);
      for (int32_t t = s.lo[k]; t < s.hi[k]; ++t) remaining_[t] += s.size[k];
      for (int32_t t = s.lo[k]; t + 1 < s.hi[k]; ++t) ++cuts_[t];
    }
  }

  Outcome run(int64_t node_limit) {
    node_limit_ = node_limit;
    for (int32_t t = 0; t < s_.sections; ++t) {
      if (remaining_[t] > capacity_) return Outcome::kInfeasible;
    }
    return solve_parts(0, s_.sections);
  }

  // Offsets (in units) of every buffer, valid after run() returned kFound.
  const std::vector<int64_t>& found() const { return solution_; }
  int64_t nodes() const { return nodes_; }

 private:
  struct Well {
    int32_t first = 0, end = 0;   // sections [first, end) at one height
    int64_t floor = 0, wall = 0;  // the lower of the two neighbours (capped at the capacity)
    int64_t left = 0, right = 0;  // the neighbours' heights (kWall beyond the partition)
    int32_t open = -1;            // the leftmost section not declared empty at this height, or -1
    int32_t limit = 0;            // a buffer placed at `open` ends at or before this section
    int32_t choices = 0;
    bool may_leave_empty = false;
  };

  bool identical(int32_t a, int32_t b) const {
    return s_.lo[a] == s_.lo[b] && s_.hi[a] == s_.hi[b] && s_.size[a] == s_.size[b] &&
           s_.alignment[a] == s_.alignment[b];
  }
  bool waits_for_twin(int32_t k) const { return twin_before_[k] >= 0 && offset_[twin_before_[k]] < 0; }
  int64_t slack(int32_t t) const { return capacity_ - height_[t] - remaining_[t]; }
  bool is_empty(int32_t t) const { return empty_at_[t] == height_[t]; }
  // Unplaced buffers live in section t.
  bool live(int32_t t) const { return remaining_[t] > 0; }
  // Sections t and t + 1 belong to one plateau only when some unplaced buffer spans both.
  bool joined(int32_t t) const { return cuts_[t] > 0; }

  int64_t aligned(int64_t offset, int32_t k) const {
    const int64_t a = s_.alignment[k];
    return a == 1 ? offset : (offset + a - 1) / a * a;
  }

  // Whether buffer k can go at the well's open position.
  bool fits(int32_t k, const Well& w) const {
    if (offset_[k] >= 0 || s_.hi[k] > w.limit || waits_for_twin(k)) return false;
    const int64_t gap = aligned(w.floor, k) - w.floor;
    if (gap == 0) return true;
    for (int32_t t = s_.lo[k]; t < s_.hi[k]; ++t) {
      if (slack(t) < gap) return false;
    }
    return true;
  }

  // Fills in the well's open position and choices; false when the well cannot be filled.
  bool examine(Well& w) {
    // The buffers that live within the well can fill it up to the lower wall; what they do
    // not fill stays empty, and that must not exceed any section's slack.
    std::fill(within_.begin() + w.first, within_.begin() + w.end + 1, 0);
    for (int32_t t = w.first; t < w.end; ++t) {
      for (const int32_t k : starters_[t]) {
        if (offset_[k] >= 0 || s_.hi[k] > w.end) continue;
        within_[t] += s_.size[k];
        within_[s_.hi[k]] -= s_.size[k];
      }
    }
    int64_t within = 0;
    for (int32_t t = w.first; t < w.end; ++t) {
      within += within_[t];
      if (slack(t) < w.wall - w.floor - within) return false;
    }
    w.open = -1;
    for (int32_t t = w.first; t < w.end; ++t) {
      if (!is_empty(t)) {
        w.open = t;
        break;
      }
    }
    if (w.open < 0) {
      // Every position at this height stays empty: the whole well rises to its lower wall.
      for (int32_t t = w.first; t < w.end; ++t) {
        if (slack(t) < w.wall - w.floor) return false;
      }
      w.choices = 1;
      return true;
    }
    w.limit = w.open + 1;
    while (w.limit < w.end && !is_empty(w.limit)) ++w.limit;
    // At this height, each section from the open one to the limit is either covered by a
    // buffer placed here (lying within them) or left empty (which needs slack there): some
    // chain of the two must span them. Where there is no slack, this is the perfect
    // packing's tiling of the floor.
    std::fill(reach_.begin() + w.open, reach_.begin() + w.limit + 1, 0);
    reach_[w.open] = 1;
    for (int32_t t = w.open; t < w.limit; ++t) {
      if (!reach_[t]) continue;
      if (slack(t) >= 1) reach_[t + 1] = 1;
      for (const int32_t k : starters_[t]) {
        if (offset_[k] < 0 && s_.hi[k] <= w.limit) reach_[s_.hi[k]] = 1;
      }
    }
    if (!reach_[w.limit]) return false;
    w.choices = 0;
    for (const int32_t k : starters_[w.open]) w.choices += fits(k, w) ? 1 : 0;
    // If the open byte stays empty, the next buffer above it in this section rests on a
    // wall or on a buffer placed later in the well to its right: that many bytes are lost.
    int64_t lost = w.wall - w.floor;
    for (int32_t t = w.open + 1; t < w.end; ++t) {
      for (const int32_t k : starters_[t]) {
        if (offset_[k] < 0 && s_.hi[k] <= w.end) lost = std::min(lost, s_.size[k]);
      }
    }
    w.may_leave_empty = slack(w.open) >= std::max<int64_t>(lost, 1);
    w.choices += w.may_leave_empty ? 1 : 0;
    return w.choices > 0;
  }

  Outcome search(int32_t lo, int32_t hi) {
    if (++nodes_ > node_limit_) return Outcome::kNodeLimit;
    if (stack_depth_ >= kMaxDepth) return Outcome::kTooDeep;
    struct Level {
      int32_t& depth;
      explicit Level(int32_t& d) : depth(d) { ++depth; }
      ~Level() { --depth; }
    } level(stack_depth_);
    if ((nodes_ & 255) == 0) {
      if (on_tick_ && (nodes_ & 1023) == 0) on_tick_(nodes_before_ + nodes_);
      if (Clock::now() > deadline_) return Outcome::kTimeout;
    }
    Well best;
    best.choices = std::numeric_limits<int32_t>::max();
    bool any = false;
    for (int32_t first = lo; first < hi;) {
      if (!live(first)) {
        ++first;
        continue;
      }
      any = true;
      const int64_t floor = height_[first];
      int32_t end = first + 1;
      while (end < hi && live(end) && joined(end - 1) && height_[end] == floor) ++end;
      const int64_t left = first > lo && live(first - 1) && joined(first - 1) ? height_[first - 1] : kWall;
      const int64_t right = end < hi && live(end) && joined(end - 1) ? height_[end] : kWall;
      if (floor < left && floor < right) {
        Well w{.first = first,
               .end = end,
               .floor = floor,
               .wall = std::min({left, right, capacity_}),
               .left = left,
               .right = right};
        if (!examine(w)) return Outcome::kInfeasible;
        if (w.choices < best.choices || (w.choices == best.choices && floor < best.floor)) best = w;
      }
      first = end;
    }
    if (!any) return Outcome::kFound;
    ML_CHECK(best.choices != std::numeric_limits<int32_t>::max(), "no well in sections [{}, {})", lo, hi);
    if (best.open < 0) return raise(best, lo, hi);
    return branch(best, lo, hi);
  }

  Outcome raise(const Well& w, int32_t lo, int32_t hi) {
    std::fill(height_.begin() + w.first, height_.begin() + w.end, w.wall);
    const Outcome outcome = search(lo, hi);
    std::fill(height_.begin() + w.first, height_.begin() + w.end, w.floor);
    return outcome;
  }

  Outcome branch(const Well& w, int32_t lo, int32_t hi) {
    std::vector<std::pair<int64_t, int32_t>>& candidates = candidates_[depth_];
    candidates.clear();
    int32_t position = 0;
    for (const int32_t k : starters_[w.open]) {
      ++position;
      if (!fits(k, w)) continue;
      // Flush edges first: a buffer that reaches the next wall in time, or whose top meets a
      // neighbour's height, leaves no new step behind.
      const int64_t top = aligned(w.floor, k) + s_.size[k];
      const int64_t flush = (s_.hi[k] == w.limit ? 2 : 0) + (w.open == w.first && top == w.left ? 2 : 0) +
                            (s_.hi[k] == w.end && top == w.right ? 1 : 0);
      candidates.emplace_back(-flush * (int64_t{1} << 32) + (random_ ? jitter(position) : position), k);
    }
    std::sort(candidates.begin(), candidates.end());
    ++depth_;
    for (const auto& [key, k] : candidates) {
      const Outcome outcome = place(k, aligned(w.floor, k), w.floor, lo, hi);
      if (outcome != Outcome::kInfeasible) {
        --depth_;
        return outcome;
      }
    }
    --depth_;
    if (!w.may_leave_empty) return Outcome::kInfeasible;
    const int64_t before = empty_at_[w.open];
    empty_at_[w.open] = w.floor;
    const Outcome outcome = search(lo, hi);
    empty_at_[w.open] = before;
    return outcome;
  }

  Outcome place(int32_t k, int64_t offset, int64_t floor, int32_t lo, int32_t hi) {
    const int64_t top = offset + s_.size[k];
    offset_[k] = offset;
    solution_[k] = offset;
    bool split = false;
    for (int32_t t = s_.lo[k]; t < s_.hi[k]; ++t) {
      height_[t] = top;
      remaining_[t] -= s_.size[k];
      split = split || remaining_[t] == 0;
    }
    for (int32_t t = s_.lo[k]; t + 1 < s_.hi[k]; ++t) split = --cuts_[t] == 0 || split;
    const Outcome outcome = split ? solve_parts(lo, hi) : search(lo, hi);
    for (int32_t t = s_.lo[k]; t + 1 < s_.hi[k]; ++t) ++cuts_[t];
    for (int32_t t = s_.lo[k]; t < s_.hi[k]; ++t) {
      height_[t] = floor;
      remaining_[t] += s_.size[k];
    }
    offset_[k] = -1;
    return outcome;
  }

  // The sections [lo, hi) fall apart into runs that no unplaced buffer joins; each is solved
  // on its own, and a failure in one is a failure of the whole (the others cannot help).
  Outcome solve_parts(int32_t lo, int32_t hi) {
    for (int32_t first = lo; first < hi;) {
      if (!live(first)) {
        ++first;
        continue;
      }
      int32_t end = first + 1;
      while (end < hi && live(end) && joined(end - 1)) ++end;
      if (first == lo && end == hi) return search(lo, hi);
      const Outcome outcome = search(first, end);
      if (outcome != Outcome::kFound) return outcome;
      first = end;
    }
    return Outcome::kFound;
  }

  // SplitMix64 over the seed: a perturbed branching order for restarts (0: none).
  int64_t jitter(int32_t position) {
    uint64_t z = (random_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return position + static_cast<int64_t>(z % 16);
  }

  const Shape& s_;
  uint64_t random_;
  const int64_t capacity_;
  const Clock::time_point deadline_;
  const std::function<void(int64_t)>& on_tick_;
  const int64_t nodes_before_;
  std::vector<int64_t> height_;     // per section: decided from 0 up to here
  std::vector<int64_t> remaining_;  // per section: sizes of the unplaced buffers live there
  std::vector<int64_t> empty_at_;   // per section: the height at which its next byte stays empty
  std::vector<int32_t> cuts_;       // per boundary t | t + 1: unplaced buffers spanning it
  std::vector<int64_t> offset_;     // -1: unplaced
  std::vector<int64_t> solution_;
  std::vector<std::vector<int32_t>> starters_;  // per section: buffers starting there, in branching order
  std::vector<int32_t> twin_before_;            // the identical buffer placed before this one, or -1
  std::vector<int64_t> within_;                 // scratch for examine()
  std::vector<char> reach_;                     // scratch for examine()
  std::vector<std::vector<std::pair<int64_t, int32_t>>> candidates_;  // per depth of branching
  size_t depth_ = 0;
  int64_t nodes_ = 0;
  int32_t stack_depth_ = 0;  // search() levels on the stack now
  int64_t node_limit_ = 0;
};

// The Luby sequence 1 1 2 1 1 2 4 1 1 2 ...
uint64_t luby(uint64_t i) {
  for (uint64_t k = 1;; ++k) {
    if (i == (uint64_t{1} << k) - 1) return uint64_t{1} << (k - 1);
    if (i < (uint64_t{1} << k) - 1) return luby(i - (uint64_t{1} << (k - 1)) + 1);
  }
}

}  // namespace

bool decision_search_is_complete(const Problem& problem) { return build_shape(problem).complete; }

DecisionResult decide_placement(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                                const std::function<void(int64_t nodes)>& on_tick) {
  DecisionResult result;
  if (has_fixed_offsets(problem) || capacity < 0) return result;
  const Shape forward = build_shape(problem);
  const int64_t units = capacity / forward.unit;
  if (forward.index.empty()) {
    result.outcome = DecisionResult::Outcome::kFound;
    result.offsets.assign(problem.buffers.size(), 0);
    return result;
  }
  const Shape backward = mirrored_in_time(forward);
  struct Variant {
    const Shape* shape;
    Branching branching;
  };
  const std::array variants = {Variant{&forward, Branching::kSizeFirst}, Variant{&backward, Branching::kSizeFirst},
                               Variant{&forward, Branching::kLengthFirst}, Variant{&backward, Branching::kLengthFirst}};
  const int64_t unit_nodes = std::max<int64_t>(8 * static_cast<int64_t>(forward.index.size()), 4096);
  for (uint64_t round = 0;; ++round) {
    const int64_t limit = unit_nodes * static_cast<int64_t>(luby(round + 1));
    const Variant& v = variants[round % variants.size()];
    WellSearch search(*v.shape, units, v.branching, round < variants.size() ? 0 : round, deadline, on_tick,
                      result.nodes);
    const Outcome outcome = search.run(limit);
    result.nodes += search.nodes();
    switch (outcome) {
      case Outcome::kFound:
        result.outcome = DecisionResult::Outcome::kFound;
        result.offsets.assign(problem.buffers.size(), 0);
        for (size_t k = 0; k < forward.index.size(); ++k) {
          result.offsets[forward.index[k]] = search.found()[k] * forward.unit;
        }
        return result;
      case Outcome::kInfeasible:
        result.outcome = forward.complete ? DecisionResult::Outcome::kInfeasible : DecisionResult::Outcome::kUnknown;
        return result;
      case Outcome::kTimeout:
      case Outcome::kTooDeep:
        return result;
      case Outcome::kNodeLimit:
        ++result.restarts;
        break;
    }
    if (Clock::now() > deadline) return result;
  }
}

}  // namespace memledger::allocate
