#include "memledger/plan/allocate/perfect_packing.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <tuple>

#include "memledger/core/error.h"
#include "skyline.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;

using skyline::Sections;

// The sections of the problem's buffers, then the hole candidates (entries from `first_hole` on).
// False unless every section holds exactly `capacity` (without candidates) or at most it (with
// them), or something is fixed. A candidate whose steps are not steps of the problem's sections
// is left out (it could not meet the buffers' edges).
bool build_packing(const Problem& problem, const std::vector<Buffer>* candidates, int64_t capacity, Sections& t,
                   size_t& first_hole) {
  for (const Buffer& b : problem.buffers) {
    if (b.fixed_offset) return false;
  }
  t = skyline::build_sections(problem);
  first_hole = t.index.size();
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
    if (candidates ? live > capacity : live != capacity) return false;
  }
  if (!candidates) return true;
  const std::vector<int64_t>& steps = t.steps;
  auto section = [&](int64_t step) {
    const auto at = std::lower_bound(steps.begin(), steps.end(), step);
    return at != steps.end() && *at == step ? static_cast<int32_t>(at - steps.begin()) : -1;
  };
  for (const Buffer& h : *candidates) {
    const int32_t lo = section(h.lower), hi = section(h.upper);
    if (lo < 0 || hi <= lo || h.size <= 0 || h.size > capacity) continue;
    t.index.push_back(-1);
    t.size.push_back(h.size);
    t.alignment.push_back(1);
    t.lo.push_back(lo);
    t.hi.push_back(hi);
  }
  return true;
}

using skyline::Outcome;

class Skyline {
 public:
  // Entries of `t` from `first_hole` on are hole candidates.
  Skyline(const Sections& t, size_t first_hole, HoleParts parts, int64_t capacity, skyline::Branching branching,
          uint64_t seed, Clock::time_point deadline, const std::function<void(int64_t)>& on_tick, int64_t nodes_before)
      : t_(t),
        first_hole_(first_hole),
        split_holes_(parts == HoleParts::kSplitAtWalls),
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
        hole_depth_(t.sections + 1, 0),
        size_(t.size),
        slack_(t.sections, capacity),
        candidates_(t.index.size() + 1),
        examined_(t.sections),
        stamps_(t.sections) {
    skyline::Starters starters = skyline::build_starters(t, branching);
    for (const int32_t k : starters.order) enders_[t.hi[k] - 1].push_back(k);
    starters_ = std::move(starters.lists);
    twin_before_ = std::move(starters.twin_before);
    // A buffer never waits for a hole candidate (nor the other way round), and hole candidates
    // are distinct rectangles whose sizes change as parts of them are placed: none waits.
    for (size_t k = 0; k < twin_before_.size(); ++k) {
      if (twin_before_[k] >= 0 && (is_hole(static_cast<int32_t>(k)) || is_hole(twin_before_[k]))) twin_before_[k] = -1;
    }
    for (size_t k = 0; k < first_hole_; ++k) {
      for (int32_t s = t.lo[k]; s < t.hi[k]; ++s) slack_[s] -= t.size[k];
    }
  }

  Outcome run(int64_t node_limit) {
    node_limit_ = node_limit;
    return search(0);
  }

  const std::vector<int64_t>& offsets() const { return offset_; }
  int64_t nodes() const { return nodes_; }

 private:
  // A run of sections at one height.
  struct Plateau {
    int32_t first = 0, end = 0;
    int64_t floor = 0;
    uint64_t newest = 0;         // the latest stamp of its sections
    int32_t higher_before = -1;  // the last section before it that is higher, or -1
    int32_t higher_after = 0;    // the first section after it that is higher, or sections
  };

  // Identical buffers are interchangeable: each waits for the one before it.
  bool waits_for_twin(int32_t k) const { return twin_before_[k] >= 0 && offset_[twin_before_[k]] < 0; }

  bool is_hole(int32_t k) const { return static_cast<size_t>(k) >= first_hole_; }
  // A hole candidate fits where the slack not yet taken by chosen holes covers it.
  bool within_slack(int32_t k) const {
    if (!is_hole(k)) return true;
    for (int32_t s = t_.lo[k]; s < t_.hi[k]; ++s) {
      if (slack_[s] < size_[k]) return false;
    }
    return true;
  }
  void take_slack(int32_t k, int64_t bytes) {
    if (!is_hole(k)) return;
    for (int32_t s = t_.lo[k]; s < t_.hi[k]; ++s) slack_[s] -= bytes;
  }
  // The least slack left over a hole candidate's sections: the most of it a part may take.
  int64_t room(int32_t k) const {
    int64_t least = capacity_;
    for (int32_t s = t_.lo[k]; s < t_.hi[k]; ++s) least = std::min(least, slack_[s]);
    return least;
  }
  // Whether part of hole candidate k (less than all of it, `bytes`) may go at `floor` in a well
  // of the given end.
  bool fits_part(int32_t k, int64_t floor, int32_t end, int64_t bytes) const {
    return split_holes_ && is_hole(k) && offset_[k] < 0 && t_.hi[k] <= end && bytes > 0 && bytes < size_[k] &&
           bytes <= capacity_ - floor && bytes <= room(k);
  }
  // Whether some part of hole candidate k could go at `floor` in a well of the given end (a
  // bound for the pruning checks, whatever the walls).
  bool fits_some(int32_t k, int64_t floor, int32_t end) const {
    return split_holes_ && is_hole(k) && offset_[k] < 0 && t_.hi[k] <= end && floor < capacity_ && room(k) > 0;
  }

  // Whether buffer k may go at offset `floor` in a well of the given end.
  bool fits(int32_t k, int64_t floor, int32_t end) const {
    return offset_[k] < 0 && t_.hi[k] <= end && size_[k] <= capacity_ - floor && floor % t_.alignment[k] == 0 &&
           within_slack(k);
  }

  Outcome search(size_t placed) {
    // Done when every buffer is placed and the chosen holes fill the rest (every section full).
    if (placed_buffers_ == first_hole_ &&
        std::all_of(height_.begin(), height_.end(), [&](int64_t h) { return h == capacity_; })) {
      return Outcome::kFound;
    }
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
    find_plateaus();
    for (size_t j = 0; j < plateaus_.size(); ++j) {
      const Plateau& p = plateaus_[j];
      const int32_t first = p.first, e = p.end;
      const int64_t floor = p.floor;
      const bool left_closed = first == 0 || height_[first - 1] > floor;
      const bool right_closed = e == t_.sections || height_[e] > floor;
      if (floor < capacity_ && !left_closed && right_closed && !ender_exists(e - 1, floor, p.higher_before)) {
        return Outcome::kInfeasible;
      }
      if (floor < capacity_ && left_closed) {
        if (!right_closed) {
          if (!opening_fillable(first, floor, p.higher_after)) return Outcome::kInfeasible;
          continue;
        }
        const int32_t count = closed_well_choices(p);
        if (count < 0) return Outcome::kInfeasible;
        if (count < fewest || (count == fewest && floor < lowest)) {
          fewest = count;
          lowest = floor;
          s = first;
          end = e;
        }
      }
    }
    ML_CHECK(s >= 0, "no closed well with {} of {} buffers placed", placed, t_.index.size());
    const int64_t floor = height_[s];
    if (placed >= candidates_.size()) candidates_.resize(placed + 1);  // a deque: the callers' lists stay
    std::vector<Candidate>& candidates = candidates_[placed];
    candidates.clear();
    const int64_t left_wall = s > 0 ? height_[s - 1] : -1;
    const int64_t right_wall = end < t_.sections ? height_[end] : -1;
    int32_t position = 0;
    for (const int32_t k : starters_[s]) {
      ++position;
      // Flush edges first: a buffer that fills the well's width, or whose top meets a wall,
      // leaves no new step behind (cut-like solutions are full of such edges).
      auto flush = [&](int64_t top) {
        return (t_.hi[k] == end ? 2 : 0) + (top == left_wall ? 2 : 0) + (t_.hi[k] == end && top == right_wall ? 1 : 0);
      };
      if (fits(k, floor, end) && !waits_for_twin(k)) {
        candidates.push_back(
            {-flush(floor + size_[k]) * (int64_t{1} << 32) + perturbation_.place(position), k, size_[k]});
      }
      // Part of a hole candidate, up to a wall: two holes of one lifetime read as one.
      const int64_t right = t_.hi[k] == end && right_wall != left_wall ? right_wall : -1;
      for (const int64_t wall : {left_wall, right}) {
        if (wall > floor && fits_part(k, floor, end, wall - floor)) {
          candidates.push_back({-flush(wall) * (int64_t{1} << 32) + perturbation_.place(position), k, wall - floor});
        }
      }
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return std::tie(a.key, a.k, a.bytes) < std::tie(b.key, b.k, b.bytes);
    });
    for (const Candidate& c : candidates) {
      const int32_t k = c.k;
      const int64_t top = floor + c.bytes;
      const bool whole = c.bytes == size_[k];
      std::fill(height_.begin() + s, height_.begin() + t_.hi[k], top);
      stamps_.touch(s, t_.hi[k]);
      if (whole) offset_[k] = floor;
      size_[k] -= whole ? 0 : c.bytes;
      take_slack(k, c.bytes);
      placed_buffers_ += is_hole(k) ? 0 : 1;
      const Outcome outcome = search(placed + 1);
      if (outcome == Outcome::kFound) return outcome;
      placed_buffers_ -= is_hole(k) ? 0 : 1;
      take_slack(k, -c.bytes);
      size_[k] += whole ? 0 : c.bytes;
      if (whole) offset_[k] = -1;
      std::fill(height_.begin() + s, height_.begin() + t_.hi[k], floor);
      stamps_.touch(s, t_.hi[k]);
      if (outcome != Outcome::kInfeasible) return outcome;
    }
    return Outcome::kInfeasible;
  }

  // The skyline's plateaus (runs of sections at one height), each with the nearest higher
  // section on either side: one pass and two stack walks instead of a scan from each plateau.
  void find_plateaus() {
    plateaus_.clear();
    for (int32_t first = 0; first < t_.sections;) {
      const int64_t floor = height_[first];
      int32_t e = first + 1;
      uint64_t newest = stamps_.at(first);
      while (e < t_.sections && height_[e] == floor) newest = std::max(newest, stamps_.at(e++));
      plateaus_.push_back(Plateau{.first = first, .end = e, .floor = floor, .newest = newest});
      first = e;
    }
    higher_.clear();
    for (size_t j = 0; j < plateaus_.size(); ++j) {
      Plateau& p = plateaus_[j];
      while (!higher_.empty() && plateaus_[higher_.back()].floor <= p.floor) higher_.pop_back();
      p.higher_before = higher_.empty() ? -1 : plateaus_[higher_.back()].end - 1;
      higher_.push_back(j);
    }
    higher_.clear();
    for (size_t j = plateaus_.size(); j-- > 0;) {
      Plateau& p = plateaus_[j];
      while (!higher_.empty() && plateaus_[higher_.back()].floor <= p.floor) higher_.pop_back();
      p.higher_after = higher_.empty() ? t_.sections : plateaus_[higher_.back()].first;
      higher_.push_back(j);
    }
  }

  // A closed well (both neighbours higher): -1 when it cannot be filled (well_fillable), else
  // how many buffers (or parts of hole candidates) can cover its first byte. Both read only
  // the well's sections and its walls' heights, so the answer is kept and given again while
  // none of those has changed (most nodes change one well and leave the others).
  int32_t closed_well_choices(const Plateau& p) {
    const int32_t first = p.first, e = p.end;
    const int64_t floor = p.floor;
    const int64_t left_height = first > 0 ? height_[first - 1] : -1;
    const int64_t right_height = e < t_.sections ? height_[e] : -1;
    Examined& x = examined_[first];
    if (x.stamp >= p.newest && x.end == e && x.floor == floor && x.left == left_height && x.right == right_height) {
      return x.choices;
    }
    int32_t count = -1;
    if (well_fillable(first, e, floor)) {
      const int64_t left = first > 0 ? left_height - floor : 0;
      const int64_t right = e < t_.sections ? right_height - floor : 0;
      count = 0;
      for (const int32_t k : starters_[first]) {
        if ((fits(k, floor, e) && !waits_for_twin(k)) || fits_part(k, floor, e, left) ||
            (t_.hi[k] == e && fits_part(k, floor, e, right))) {
          ++count;
        }
      }
    }
    x = Examined{
        .stamp = stamps_.now(), .end = e, .floor = floor, .left = left_height, .right = right_height, .choices = count};
    return count;
  }

  // A plateau higher than the section before it and lower than the one after: the buffer
  // that covers its last section's next byte ends there.
  // It cannot reach back past a section already higher than the plateau (`wall`, or -1).
  bool ender_exists(int32_t last, int64_t floor, int32_t wall) const {
    for (const int32_t k : enders_[last]) {
      if (t_.lo[k] > wall && (fits(k, floor, last + 1) || fits_some(k, floor, last + 1))) return true;
    }
    return false;
  }

  // A plateau lower than the section before it and higher than the one after: the next
  // buffer here starts at `first` exactly and stops before the next higher section (`wall`).
  bool opening_fillable(int32_t first, int64_t floor, int32_t wall) const {
    for (const int32_t k : starters_[first]) {
      if (fits(k, floor, wall) || fits_some(k, floor, wall)) return true;
    }
    return false;
  }

  // A closed well [first, end) at `floor`, both neighbours higher: the next buffer here
  // starts at `first` exactly, and the whole floor must be tiled in time by buffers that start
  // and end within the well.
  bool well_fillable(int32_t first, int32_t end, int64_t floor) {
    std::fill(reach_.begin() + first, reach_.begin() + end + 1, 0);
    reach_[first] = 1;
    for (int32_t s = first; s < end; ++s) {
      if (!reach_[s]) continue;
      for (const int32_t k : starters_[s]) {
        if (fits(k, floor, end) || fits_some(k, floor, end)) reach_[t_.hi[k]] = 1;
      }
    }
    if (!reach_[end]) return false;
    // Up to the lower wall, every section of the well holds only buffers that live within
    // the well (any other one meets a wall section, so it sits at or above that wall).
    const int64_t wall =
        std::min(first > 0 ? height_[first - 1] : capacity_, end < t_.sections ? height_[end] : capacity_);
    // depth_ (hole_depth_ for the hole candidates) holds differences: + size where a buffer
    // starts, - size where it ends. The holes chosen at a section add up to its slack at most.
    std::fill(depth_.begin() + first, depth_.begin() + end + 1, 0);
    std::fill(hole_depth_.begin() + first, hole_depth_.begin() + end + 1, 0);
    for (int32_t s = first; s < end; ++s) {
      for (const int32_t k : starters_[s]) {
        if (offset_[k] >= 0 || t_.hi[k] > end) continue;
        std::vector<int64_t>& d = is_hole(k) ? hole_depth_ : depth_;
        d[s] += size_[k];
        d[t_.hi[k]] -= size_[k];
      }
    }
    int64_t depth = 0, hole_depth = 0;
    for (int32_t s = first; s < end; ++s) {
      depth += depth_[s];
      hole_depth += hole_depth_[s];
      if (depth + std::min(hole_depth, slack_[s]) < wall - floor) return false;
    }
    return true;
  }

  const Sections& t_;
  const size_t first_hole_;  // entries from here on are hole candidates
  const bool split_holes_;   // hole candidates may go in parts (HoleParts::kSplitAtWalls)
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
  std::vector<int64_t> hole_depth_;             // scratch for well_fillable
  std::vector<int64_t> size_;                   // per entry: its size (what is left of a hole candidate)
  std::vector<int64_t> slack_;                  // per section: room left for holes not yet chosen
  size_t placed_buffers_ = 0;
  struct Candidate {
    int64_t key;  // the order tried
    int32_t k;
    int64_t bytes;  // its size, or the part of a hole candidate placed
  };
  std::deque<std::vector<Candidate>> candidates_;  // per depth
  std::vector<Plateau> plateaus_;                  // scratch for search(), used before it recurses
  std::vector<size_t> higher_;                     // scratch for find_plateaus()
  // closed_well_choices's answer, kept per first section.
  struct Examined {
    uint64_t stamp = 0;  // stamps_.now() when it was made
    int32_t end = -1;
    int64_t floor = 0, left = 0, right = 0;
    int32_t choices = -1;
  };
  std::vector<Examined> examined_;
  skyline::SectionStamps stamps_;  // when each section's heights, holes or placed buffers last changed
  int64_t nodes_ = 0;
  int64_t node_limit_ = 0;
};

}  // namespace

namespace {

PerfectPackingResult pack(const Problem& problem, const std::vector<Buffer>* holes, HoleParts parts, int64_t capacity,
                          Clock::time_point deadline, const std::function<void(int64_t nodes)>& on_tick,
                          int64_t max_nodes) {
  PerfectPackingResult result;
  Sections forward;
  size_t first_hole = 0;
  if (!build_packing(problem, holes, capacity, forward, first_hole) ||
      forward.index.size() > kPerfectPackingMaxBuffers) {
    return result;
  }
  const skyline::Restarts run = skyline::run_restarts(
      forward, deadline,
      [&](const Sections& t, const skyline::Round& r, int64_t before) {
        return Skyline(t, first_hole, parts, capacity, r.branching, r.seed, deadline, on_tick, before);
      },
      max_nodes);
  result.nodes = run.nodes;
  result.restarts = run.restarts;
  switch (run.outcome) {
    case Outcome::kFound:
      result.outcome = PerfectPackingResult::Outcome::kFound;
      result.offsets.assign(problem.buffers.size(), 0);
      for (size_t k = 0; k < first_hole; ++k) result.offsets[forward.index[k]] = run.offsets[k];
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

}  // namespace

bool is_tight(const Problem& problem, int64_t capacity) {
  Sections t;
  size_t first_hole = 0;
  return build_packing(problem, nullptr, capacity, t, first_hole);
}

PerfectPackingResult find_perfect_packing(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                                          const std::function<void(int64_t nodes)>& on_tick, int64_t max_nodes) {
  return pack(problem, nullptr, HoleParts::kWhole, capacity, deadline, on_tick, max_nodes);
}

PerfectPackingResult find_packing_with_holes(const Problem& problem, const std::vector<Buffer>& holes, int64_t capacity,
                                             Clock::time_point deadline,
                                             const std::function<void(int64_t nodes)>& on_tick, int64_t max_nodes,
                                             HoleParts parts) {
  return pack(problem, &holes, parts, capacity, deadline, on_tick, max_nodes);
}

}  // namespace memledger::allocate
