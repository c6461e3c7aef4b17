#include "memledger/plan/allocate/offset_order_search.h"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <tuple>
#include <vector>

#include "memledger/core/error.h"

namespace memledger::allocate {
namespace {

// Above this many pairs of buffers that meet in time, the search is not tried.
constexpr int64_t kMaxPairs = 20'000'000;

using Clock = std::chrono::steady_clock;

// The buffers that take part in the search (size > 0), their lifetimes as ranges of
// sections (the spans between consecutive distinct steps), and who meets whom in time.
struct Instance {
  std::vector<int32_t> index;  // into problem.buffers
  std::vector<int64_t> size, alignment;
  std::vector<int32_t> lo, hi;  // sections [lo, hi)
  std::vector<std::vector<int32_t>> overlaps;
  std::vector<std::vector<int32_t>> members;  // buffers live in each section
  std::vector<int64_t> total;                 // sum of sizes live in each section
  int32_t sections = 0;
};

// Returns false when the buffers meet in more than `max_pairs` pairs.
bool build_instance(const Problem& problem, int64_t max_pairs, Instance& in) {
  std::vector<int64_t> steps;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    if (b.size == 0) continue;
    in.index.push_back(static_cast<int32_t>(i));
    in.size.push_back(b.size);
    in.alignment.push_back(b.alignment);
    steps.push_back(b.lower);
    steps.push_back(b.upper);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  const size_t n = in.index.size();
  in.sections = static_cast<int32_t>(std::max<size_t>(steps.size(), 1) - 1);
  in.lo.resize(n);
  in.hi.resize(n);
  in.members.assign(in.sections, {});
  in.total.assign(in.sections, 0);
  for (size_t k = 0; k < n; ++k) {
    const Buffer& b = problem.buffers[in.index[k]];
    in.lo[k] = static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), b.lower) - steps.begin());
    in.hi[k] = static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), b.upper) - steps.begin());
  }
  std::vector<int32_t> by_lo(n);
  std::iota(by_lo.begin(), by_lo.end(), 0);
  std::sort(by_lo.begin(), by_lo.end(), [&](int32_t a, int32_t b) { return in.lo[a] < in.lo[b]; });
  in.overlaps.assign(n, {});
  std::vector<int32_t> active;
  int64_t pairs = 0;
  for (const int32_t k : by_lo) {
    std::erase_if(active, [&](int32_t j) { return in.hi[j] <= in.lo[k]; });
    pairs += static_cast<int64_t>(active.size());
    if (pairs > max_pairs) return false;
    for (const int32_t j : active) {
      in.overlaps[k].push_back(j);
      in.overlaps[j].push_back(k);
    }
    active.push_back(k);
  }
  int64_t membership = 0;
  for (size_t k = 0; k < n; ++k) {
    membership += in.hi[k] - in.lo[k];
    if (membership > max_pairs) return false;
    for (int32_t s = in.lo[k]; s < in.hi[k]; ++s) {
      in.members[s].push_back(static_cast<int32_t>(k));
      in.total[s] += in.size[k];
    }
  }
  return true;
}

// A static preordering: the tie-break between buffers that can go equally low.
enum class Preorder { kTotalSizeLength, kTotalLengthSize, kSizeTotalLength, kAreaTotalSize };
constexpr std::array kPreorders = {Preorder::kTotalSizeLength, Preorder::kSizeTotalLength, Preorder::kTotalLengthSize,
                                   Preorder::kAreaTotalSize};

std::vector<int32_t> preorder_ranks(const Problem& problem, const Instance& in, Preorder preorder) {
  const size_t n = in.index.size();
  std::vector<int64_t> section_total(n, 0), length(n);
  std::vector<long double> area(n);
  for (size_t k = 0; k < n; ++k) {
    for (int32_t s = in.lo[k]; s < in.hi[k]; ++s) section_total[k] = std::max(section_total[k], in.total[s]);
    const Buffer& b = problem.buffers[in.index[k]];
    length[k] = b.upper - b.lower;
    area[k] = static_cast<long double>(b.size) * length[k];
  }
  std::vector<int32_t> sorted(n);
  std::iota(sorted.begin(), sorted.end(), 0);
  // long double holds every int64 exactly.
  using Key = std::tuple<long double, long double, long double>;
  auto key = [&](int32_t k) -> Key {
    switch (preorder) {
      case Preorder::kTotalSizeLength:
        return Key(section_total[k], in.size[k], length[k]);
      case Preorder::kTotalLengthSize:
        return Key(section_total[k], length[k], in.size[k]);
      case Preorder::kSizeTotalLength:
        return Key(in.size[k], section_total[k], length[k]);
      case Preorder::kAreaTotalSize:
        return Key(area[k], section_total[k], in.size[k]);
    }
    ML_CHECK(false, "unknown preorder");
  };
  std::stable_sort(sorted.begin(), sorted.end(), [&](int32_t a, int32_t b) { return key(a) > key(b); });
  std::vector<int32_t> rank(n);
  for (size_t r = 0; r < n; ++r) rank[sorted[r]] = static_cast<int32_t>(r);
  return rank;
}

enum class Outcome { kFound, kInfeasible, kNodeLimit, kTimeout };

// Depth-first search over canonical placements within one capacity. The state changes of
// each placement are logged and undone on the way back.
//
// Dynamic decomposition (as MiniMalloc's): when no unplaced buffer spans the boundary
// between two sections any more, the buffers on either side no longer interact, so each
// side is searched on its own and a failure on one side never re-opens choices on the other.
class Search {
 public:
  Search(const Instance& in, const std::vector<int32_t>& rank, int64_t capacity, Clock::time_point deadline,
         const std::function<void(int64_t)>& on_tick, int64_t nodes_before)
      : in_(in),
        rank_(rank),
        capacity_(capacity),
        deadline_(deadline),
        on_tick_(on_tick),
        nodes_before_(nodes_before),
        offset_(in.index.size(), -1),
        solution_(in.index.size(), -1),
        min_offset_(in.index.size(), 0),
        floor_(in.sections, 0),
        total_(in.total),
        cuts_(std::max(in.sections - 1, 0), 0),
        stamp_(in.sections, 0),
        candidates_(2 * in.index.size() + 2) {
    // cuts_[s]: buffers spanning the boundary between sections s and s + 1.
    for (size_t k = 0; k < in.index.size(); ++k) {
      for (int32_t s = in.lo[k]; s + 1 < in.hi[k]; ++s) ++cuts_[s];
    }
  }

  Outcome run(int64_t node_limit) {
    node_limit_ = node_limit;
    for (int32_t s = 0; s < in_.sections; ++s) {
      if (total_[s] > capacity_) return Outcome::kInfeasible;
    }
    std::vector<int32_t> all(in_.index.size());
    std::iota(all.begin(), all.end(), 0);
    std::vector<int32_t> cutpoints;
    for (int32_t s = 0; s + 1 < in_.sections; ++s) {
      if (cuts_[s] == 0) cutpoints.push_back(s + 1);
    }
    return solve_parts({std::move(all), 0, in_.sections}, cutpoints, 0);
  }

  // Offsets of every buffer, valid after run() returned kFound.
  const std::vector<int64_t>& found() const { return solution_; }
  int64_t nodes() const { return nodes_; }

 private:
  struct Partition {
    std::vector<int32_t> buffers;  // some may be placed already
    int32_t lo, hi;                // sections [lo, hi)
  };
  struct Candidate {
    int64_t offset;
    int32_t rank;
    int32_t buffer;
  };
  struct Change {
    int32_t index;
    int64_t value;
  };

  Outcome search(const Partition& part, int64_t last_offset, int32_t last_rank, size_t depth) {
    if (++nodes_ > node_limit_) return Outcome::kNodeLimit;
    if ((nodes_ & 63) == 0) {
      if (on_tick_ && (nodes_ & 1023) == 0) on_tick_(nodes_before_ + nodes_);
      if (Clock::now() > deadline_) return Outcome::kTimeout;
    }
    std::vector<Candidate>& candidates = candidates_[depth];
    candidates.clear();
    int64_t min_height = std::numeric_limits<int64_t>::max();
    for (const int32_t k : part.buffers) {
      if (offset_[k] >= 0) continue;
      candidates.push_back({min_offset_[k], rank_[k], k});
      min_height = std::min(min_height, min_offset_[k] + in_.size[k]);
    }
    if (candidates.empty()) return Outcome::kFound;
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return std::tie(a.offset, a.rank) < std::tie(b.offset, b.rank);
    });
    for (size_t i = 0; i < candidates.size(); ++i) {
      const Candidate c = candidates[i];  // a copy: deeper levels reuse other lists only
      // Dominance: the buffer that reaches min_height could be placed below this one first.
      if (c.offset >= min_height) break;
      // Canonical order: offsets never go down; at equal offsets, ranks go up.
      if (c.offset < last_offset || (c.offset == last_offset && c.rank < last_rank)) continue;
      const size_t offset_mark = offset_log_.size();
      const size_t floor_mark = floor_log_.size();
      const bool hatless = place(c.buffer, c.offset);
      Outcome outcome = Outcome::kInfeasible;
      if (fits(part, c.offset)) outcome = descend(part, c, depth);
      unplace(c.buffer, offset_mark, floor_mark);
      if (outcome != Outcome::kInfeasible) return outcome;
      // A buffer that meets no unplaced buffer is independent of the rest: if the rest fails
      // with it placed, it fails with any other choice here too.
      if (hatless) return Outcome::kInfeasible;
    }
    return Outcome::kInfeasible;
  }

  // After placing c: go on in this partition, or in its parts if c was the last buffer
  // spanning some boundary.
  Outcome descend(const Partition& part, const Candidate& c, size_t depth) {
    solution_[c.buffer] = c.offset;
    std::vector<int32_t> cutpoints;
    for (int32_t s = in_.lo[c.buffer]; s + 1 < in_.hi[c.buffer]; ++s) {
      if (--cuts_[s] == 0) cutpoints.push_back(s + 1);
    }
    const Outcome outcome =
        cutpoints.empty() ? search(part, c.offset, c.rank, depth + 1) : solve_parts(part, cutpoints, depth + 1);
    for (int32_t s = in_.lo[c.buffer]; s + 1 < in_.hi[c.buffer]; ++s) ++cuts_[s];
    return outcome;
  }

  // Splits `part` at the (sorted) cutpoints and solves each piece on its own.
  Outcome solve_parts(const Partition& part, const std::vector<int32_t>& cutpoints, size_t depth) {
    std::vector<int32_t> bounds = {part.lo};
    for (const int32_t cut : cutpoints) {
      if (cut > part.lo && cut < part.hi) bounds.push_back(cut);
    }
    bounds.push_back(part.hi);
    for (size_t b = 0; b + 1 < bounds.size(); ++b) {
      Partition sub{{}, bounds[b], bounds[b + 1]};
      for (const int32_t k : part.buffers) {
        if (offset_[k] < 0 && in_.lo[k] < sub.hi && sub.lo < in_.hi[k]) sub.buffers.push_back(k);
      }
      if (sub.buffers.empty()) continue;
      const Outcome outcome = search(sub, 0, -1, depth);
      if (outcome != Outcome::kFound) return outcome;
    }
    return Outcome::kFound;
  }

  // Returns whether k meets no unplaced buffer.
  bool place(int32_t k, int64_t offset) {
    offset_[k] = offset;
    const int64_t top = offset + in_.size[k];
    ++epoch_;
    bool hatless = true;
    for (const int32_t o : in_.overlaps[k]) {
      if (offset_[o] >= 0) continue;
      hatless = false;
      if (min_offset_[o] >= top) continue;
      offset_log_.push_back({o, min_offset_[o]});
      const int64_t a = in_.alignment[o];
      min_offset_[o] = a == 1 ? top : (top + a - 1) / a * a;
      for (int32_t s = in_.lo[o]; s < in_.hi[o]; ++s) {
        if (stamp_[s] != epoch_) {
          stamp_[s] = epoch_;
          touched_.push_back(s);
        }
      }
    }
    // Every buffer still unplaced in k's sections meets k, so none can go below its top.
    for (int32_t s = in_.lo[k]; s < in_.hi[k]; ++s) {
      floor_log_.push_back({s, floor_[s]});
      floor_[s] = top;
      total_[s] -= in_.size[k];
    }
    // Sections whose buffers were pushed up: their floor is at least their lowest buffer.
    for (const int32_t s : touched_) {
      int64_t lowest = std::numeric_limits<int64_t>::max();
      for (const int32_t m : in_.members[s]) {
        if (offset_[m] < 0) lowest = std::min(lowest, min_offset_[m]);
      }
      if (lowest != std::numeric_limits<int64_t>::max() && lowest > floor_[s]) {
        floor_log_.push_back({s, floor_[s]});
        floor_[s] = lowest;
      }
    }
    touched_.clear();
    return hatless;
  }

  void unplace(int32_t k, size_t offset_mark, size_t floor_mark) {
    for (int32_t s = in_.lo[k]; s < in_.hi[k]; ++s) total_[s] += in_.size[k];
    while (floor_log_.size() > floor_mark) {
      floor_[floor_log_.back().index] = floor_log_.back().value;
      floor_log_.pop_back();
    }
    while (offset_log_.size() > offset_mark) {
      min_offset_[offset_log_.back().index] = offset_log_.back().value;
      offset_log_.pop_back();
    }
    offset_[k] = -1;
  }

  // Inference: in every section of the partition, what is unplaced stacks at or above both
  // the section's floor and the offset just used (later placements here never go lower).
  bool fits(const Partition& part, int64_t offset) const {
    for (int32_t s = part.lo; s < part.hi; ++s) {
      if (total_[s] > 0 ? std::max(floor_[s], offset) + total_[s] > capacity_ : floor_[s] > capacity_) return false;
    }
    return true;
  }

  const Instance& in_;
  const std::vector<int32_t>& rank_;
  const int64_t capacity_;
  const Clock::time_point deadline_;
  const std::function<void(int64_t)>& on_tick_;
  const int64_t nodes_before_;
  std::vector<int64_t> offset_;      // -1: unplaced
  std::vector<int64_t> solution_;    // the offsets of the last success, per buffer
  std::vector<int64_t> min_offset_;  // lowest offset above the placed buffers it meets
  std::vector<int64_t> floor_;
  std::vector<int64_t> total_;  // sizes still unplaced per section
  std::vector<int32_t> cuts_;
  std::vector<uint32_t> stamp_;
  std::vector<int32_t> touched_;
  uint32_t epoch_ = 0;
  std::vector<std::vector<Candidate>> candidates_;  // one list per depth
  std::vector<Change> offset_log_, floor_log_;
  int64_t nodes_ = 0;
  int64_t node_limit_ = 0;
};

}  // namespace

DecisionResult decide_in_offset_order(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                                      const std::function<void(int64_t nodes)>& on_tick) {
  DecisionResult result;
  if (has_fixed_offsets(problem) || capacity < 0) return result;
  Instance in;
  if (!build_instance(problem, kMaxPairs, in)) return result;
  std::vector<std::vector<int32_t>> ranks;
  for (const Preorder p : kPreorders) ranks.push_back(preorder_ranks(problem, in, p));
  // The preorderings take turns with a node limit that doubles each round (one ordering is
  // often lucky where another thrashes), until one decides or the deadline passes.
  for (int64_t limit = std::max<int64_t>(2 * static_cast<int64_t>(in.index.size()), 64);; limit *= 2) {
    for (const std::vector<int32_t>& rank : ranks) {
      Search search(in, rank, capacity, deadline, on_tick, result.nodes);
      const Outcome outcome = search.run(limit);
      result.nodes += search.nodes();
      switch (outcome) {
        case Outcome::kNodeLimit:
          ++result.restarts;
          continue;
        case Outcome::kFound:
          result.outcome = DecisionResult::Outcome::kFound;
          result.offsets.assign(problem.buffers.size(), 0);
          for (size_t k = 0; k < in.index.size(); ++k) result.offsets[in.index[k]] = search.found()[k];
          return result;
        case Outcome::kInfeasible:
          result.outcome = DecisionResult::Outcome::kInfeasible;
          return result;
        case Outcome::kTimeout:
          return result;
      }
    }
    if (Clock::now() > deadline) return result;
  }
}

}  // namespace memledger::allocate
