#include "memledger/plan/allocate/perfect_packing.h"

#include <algorithm>
#include <limits>

#include "memledger/core/error.h"
#include "skyline.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;

using skyline::Sections;

// Returns false unless every section holds exactly `capacity` (and nothing is fixed).
bool build_tight(const Problem& problem, int64_t capacity, Sections& t) {
  for (const Buffer& b : problem.buffers) {
    if (b.fixed_offset) return false;
  }
  t = skyline::build_sections(problem);
  if (t.index.empty() || capacity <= 0) return false;
  std::vector<int64_t> delta(t.sections + 1, 0);
  for (size_t k = 0; k < t.index.size(); ++k) {
    if (t.size[k] > capacity) return false;
    delta[t.lo[k]] += t.size[k];  // no overflow: check_problem bounds the sum of all sizes
    delta[t.hi[k]] -= t.size[k];
  }
  int64_t live = 0;
  for (int32_t s = 0; s < t.sections; ++s) {
    live += delta[s];
    if (live != capacity) return false;
  }
  return true;
}

using skyline::Outcome;

class Skyline {
 public:
  Skyline(const Sections& t, int64_t capacity, skyline::Branching branching, uint64_t seed, Clock::time_point deadline,
          const std::function<void(int64_t)>& on_tick, int64_t nodes_before)
      : t_(t),
        perturbation_(seed),
        capacity_(capacity),
        deadline_(deadline),
        on_tick_(on_tick),
        nodes_before_(nodes_before),
        height_(t.sections, 0),
        offset_(t.index.size(), -1),
        enders_(t.sections),
        reach_(t.sections + 1, 0),
        depth_(t.sections + 1, 0),
        candidates_(t.index.size() + 1) {
    skyline::Starters starters = skyline::build_starters(t, branching);
    for (const int32_t k : starters.order) enders_[t.hi[k] - 1].push_back(k);
    starters_ = std::move(starters.lists);
    twin_before_ = std::move(starters.twin_before);
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
    std::vector<std::pair<int64_t, int32_t>>& candidates = candidates_[placed];
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
      const int64_t flush =
          (t_.hi[k] == end ? 2 : 0) + (top == left_wall ? 2 : 0) + (t_.hi[k] == end && top == right_wall ? 1 : 0);
      candidates.emplace_back(-flush * (int64_t{1} << 32) + perturbation_.place(position), k);
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

  const Sections& t_;
  skyline::Perturbation perturbation_;
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
  std::vector<std::vector<std::pair<int64_t, int32_t>>> candidates_;  // per depth: (order key, buffer)
  int64_t nodes_ = 0;
  int64_t node_limit_ = 0;
};

}  // namespace

bool is_tight(const Problem& problem, int64_t capacity) {
  Sections t;
  return build_tight(problem, capacity, t);
}

PerfectPackingResult find_perfect_packing(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                                          const std::function<void(int64_t nodes)>& on_tick, int64_t max_nodes) {
  PerfectPackingResult result;
  Sections forward;
  if (!build_tight(problem, capacity, forward) || forward.index.size() > kPerfectPackingMaxBuffers) return result;
  const skyline::Restarts run = skyline::run_restarts(
      forward, deadline,
      [&](const Sections& t, const skyline::Round& r, int64_t before) {
        return Skyline(t, capacity, r.branching, r.seed, deadline, on_tick, before);
      },
      max_nodes);
  result.nodes = run.nodes;
  result.restarts = run.restarts;
  switch (run.outcome) {
    case Outcome::kFound:
      result.outcome = PerfectPackingResult::Outcome::kFound;
      result.offsets.assign(problem.buffers.size(), 0);
      for (size_t k = 0; k < forward.index.size(); ++k) result.offsets[forward.index[k]] = run.offsets[k];
      break;
    case Outcome::kInfeasible:
      result.outcome = PerfectPackingResult::Outcome::kInfeasible;
      break;
    default:
      result.outcome = PerfectPackingResult::Outcome::kTimeout;
      break;
  }
  return result;
}

}  // namespace memledger::allocate
