#include "memledger/plan/allocate/decision_search.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>
#include <optional>

#include "memledger/core/error.h"
#include "skyline.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;
using skyline::Sections;
constexpr int64_t kWall = std::numeric_limits<int64_t>::max();  // beyond the partition: never lower

// The sections of the buffers of size > 0, sizes counted in `unit` bytes: the greatest
// common divisor of the sizes, when every alignment divides it (then the search is complete
// and alignments are 1 in that unit).
struct Shape {
  Sections sections;
  int64_t unit = 1;
  bool complete = true;
  size_t first_hole = 0;  // entries from here on are hole candidates (index -1)
};

// With `holes`, the hole candidates follow the buffers: those whose steps are steps of the
// buffers' sections and whose sizes are whole units (others could not meet the buffers' edges).
Shape build_shape(const Problem& problem, const std::vector<Buffer>* holes = nullptr) {
  Shape shape{.sections = skyline::build_sections(problem)};
  Sections& s = shape.sections;
  int64_t unit = 0;
  for (const int64_t size : s.size) unit = std::gcd(unit, size);
  for (const int64_t a : s.alignment) shape.complete = shape.complete && unit % a == 0;
  shape.unit = shape.complete && unit > 0 ? unit : 1;
  for (size_t k = 0; k < s.index.size(); ++k) {
    s.size[k] /= shape.unit;
    if (shape.complete) s.alignment[k] = 1;
  }
  shape.first_hole = s.index.size();
  if (!holes) return shape;
  auto section = [&](int64_t step) {
    const auto at = std::lower_bound(s.steps.begin(), s.steps.end(), step);
    return at != s.steps.end() && *at == step ? static_cast<int32_t>(at - s.steps.begin()) : -1;
  };
  for (const Buffer& h : *holes) {
    const int32_t lo = section(h.lower), hi = section(h.upper);
    if (lo < 0 || hi <= lo || h.size <= 0 || h.size % shape.unit != 0) continue;
    s.index.push_back(-1);
    s.size.push_back(h.size / shape.unit);
    s.alignment.push_back(1);
    s.lo.push_back(lo);
    s.hi.push_back(hi);
  }
  return shape;
}

using skyline::Outcome;

// The search runs on an explicit stack of frames (one per decision: a buffer placed, a
// byte left empty, a well raised, the sections split into parts), so its depth is bounded
// by memory, not by the thread's stack.
class WellSearch {
 public:
  // Entries from `first_hole` on are hole candidates; `with_holes`: the slack is theirs to fill
  // (no position is left empty).
  WellSearch(const Sections& s, size_t first_hole, bool with_holes, int64_t capacity, skyline::Branching branching,
             uint64_t seed, Clock::time_point deadline, const std::function<void(int64_t)>& on_tick,
             int64_t nodes_before)
      : s_(s),
        first_hole_(first_hole),
        hole_mode_(with_holes),
        perturbation_(seed),
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
        examined_(s.sections),
        stamps_(s.sections),
        within_(s.sections + 1, 0),
        smallest_(s.sections, 0),
        reach_(s.sections + 1, 0),
        tried_(s.index.size(), {0, 0}),
        words_(static_cast<size_t>(s.sections + 64) / 64) {
    skyline::Starters starters = skyline::build_starters(s, branching);
    starters_ = std::move(starters.lists);
    twin_before_ = std::move(starters.twin_before);
    for (size_t k = 0; k < twin_before_.size(); ++k) {
      if (twin_before_[k] >= 0 && (is_hole(static_cast<int32_t>(k)) || is_hole(twin_before_[k]))) twin_before_[k] = -1;
    }
    enders_.resize(s.sections);
    for (const int32_t k : starters.order) enders_[s.hi[k] - 1].push_back(k);
    unplaced_ = static_cast<int64_t>(first_hole_);
    holes_within_.assign(s.sections + 1, 0);
    held_.assign(s.sections, 0);
    for (size_t k = 0; k < first_hole_; ++k) {
      std::fill(held_.begin() + s.lo[k], held_.begin() + s.hi[k], 1);
      for (int32_t t = s.lo[k]; t < s.hi[k]; ++t) remaining_[t] += s.size[k];
      for (int32_t t = s.lo[k]; t + 1 < s.hi[k]; ++t) ++cuts_[t];
    }
    hole_fit_.resize(s.index.size() - first_hole_);
    live_bits_.assign(words_, 0);
    edge_bits_.assign(words_, 0);
    refresh(0, s.sections);
  }

  Outcome run(int64_t node_limit) {
    node_limit_ = node_limit;
    for (int32_t t = 0; t < s_.sections; ++t) {
      if (remaining_[t] > capacity_) return Outcome::kInfeasible;
    }
    frames_.clear();
    push(Frame{.kind = Kind::kParts, .lo = 0, .hi = s_.sections});
    Outcome returned = Outcome::kFound;  // what the frame that finished last returned
    while (!frames_.empty()) {
      const std::optional<Outcome> done = step(frames_.size() - 1, returned);
      if (!done) continue;
      returned = *done;
      frames_.pop_back();
    }
    return returned;
  }

  // Offsets (in units) of every buffer, valid after run() returned kFound.
  const std::vector<int64_t>& offsets() const { return solution_; }
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

  // kSearch: pick the well to branch on (becomes kRaise or kBranch); kParts: search the
  // runs of sections that no unplaced buffer joins one after the other; kRaise: a well whose
  // every position stays empty rises to its lower wall; kBranch: the buffers that may go at
  // the open position, then leaving it empty; kPlace: one buffer placed.
  enum class Kind : uint8_t { kSearch, kParts, kRaise, kBranch, kPlace };
  struct Frame {
    Kind kind = Kind::kSearch;
    int32_t lo = 0, hi = 0;               // the sections searched
    int32_t stage = 0;                    // 0 when entered; then how far it got
    int32_t buffer = -1;                  // kPlace
    int64_t floor = 0;                    // kPlace: the height restored
    int64_t saved = 0;                    // kBranch: empty_at_ at the open position before it was left empty
    size_t next = 0, end = 0, begin = 0;  // kBranch: its candidates in pool_; kParts: next = the next section
    Well well;                            // kRaise, kBranch
  };

  // Advances frame i, given what its last child returned (when it had one); returns its
  // outcome once it is done, nothing when it pushed a child or became another frame.
  std::optional<Outcome> step(size_t i, Outcome child) {
    switch (frames_[i].kind) {
      case Kind::kSearch:
        return step_search(i);
      case Kind::kParts:
        return step_parts(i, child);
      case Kind::kRaise:
        return step_raise(i, child);
      case Kind::kBranch:
        return step_branch(i, child);
      case Kind::kPlace:
        return step_place(i, child);
    }
    return Outcome::kInfeasible;
  }

  void call(Kind kind, int32_t lo, int32_t hi) { push(Frame{.kind = kind, .lo = lo, .hi = hi}); }
  void push(const Frame& frame) {
    frames_.push_back(frame);
    const size_t need = frames_.size() * words_;
    if (conflicts_.size() < need) conflicts_.resize(std::max(need, conflicts_.size() * 2), 0);
    std::fill_n(conflict(frames_.size() - 1), words_, 0);
  }

  // Conflict sets: the sections of time whose state (heights, bytes left empty, which of
  // the buffers live there are placed) explains why a frame's search failed: any state that
  // agrees with it there fails too. A branch whose alternatives all lie outside its
  // child's conflict set fails at once with that set (the failure does not depend on the
  // choice): the search jumps back over decisions made elsewhere in time.
  uint64_t* conflict(size_t i) { return conflicts_.data() + i * words_; }
  // Calls f(word, mask) for the words of a conflict set that hold sections [first, end).
  template <class F>
  static void for_words(int32_t first, int32_t end, F f) {
    for (int32_t t = first; t < end;) {
      const int32_t word_end = std::min(end, (t | 63) + 1);
      const int32_t bits = word_end - t;
      const uint64_t mask = (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1) << (t & 63);
      if (f(static_cast<size_t>(t >> 6), mask)) return;
      t = word_end;
    }
  }
  void add_sections(size_t i, int32_t first, int32_t end) {
    uint64_t* c = conflict(i);
    for_words(std::max(first, 0), std::min(end, s_.sections), [&](size_t w, uint64_t mask) {
      c[w] |= mask;
      return false;
    });
  }
  void add_conflict(size_t i, size_t from) {
    uint64_t* c = conflict(i);
    const uint64_t* f = conflict(from);
    for (size_t w = 0; w < words_; ++w) c[w] |= f[w];
  }
  bool meets(size_t i, int32_t first, int32_t end) {
    const uint64_t* c = conflict(i);
    bool met = false;
    for_words(first, end, [&](size_t w, uint64_t mask) { return met = (c[w] & mask) != 0; });
    return met;
  }
  // The well's own sections and its two walls: what decides its alternatives.
  void add_well(size_t i, const Well& w) { add_sections(i, w.first - 1, w.end + 1); }

  std::optional<Outcome> step_search(size_t i) {
    if (++nodes_ > node_limit_) return Outcome::kNodeLimit;
    if ((nodes_ & 255) == 0) {
      if (on_tick_ && (nodes_ & 1023) == 0) on_tick_(nodes_before_ + nodes_);
      if (Clock::now() > deadline_) return Outcome::kTimeout;
    }
    const int32_t lo = frames_[i].lo, hi = frames_[i].hi;
    Well best;
    best.choices = std::numeric_limits<int32_t>::max();
    // The plateaus of the skyline: runs of live sections at one height that unplaced
    // buffers join.
    plateaus_.clear();
    for (int32_t first = next_bit(live_bits_, lo, hi); first < hi;) {
      const int32_t end = next_bit(edge_bits_, first + 1, hi);
      plateaus_.push_back(Plateau{.first = first,
                                  .end = end,
                                  .floor = height_[first],
                                  .joined_left = first > lo && joined(first - 1) && live(first - 1)});
      first = end < hi && has_bit(live_bits_, end) ? end : next_bit(live_bits_, end, hi);
    }
    if (plateaus_.empty() || unplaced_ == 0) return Outcome::kFound;
    for (size_t j = 0; j < plateaus_.size(); ++j) {
      const Plateau& p = plateaus_[j];
      const int32_t first = p.first, end = p.end;
      const int64_t floor = p.floor;
      const int64_t left = p.joined_left ? plateaus_[j - 1].floor : kWall;
      const int64_t right = j + 1 < plateaus_.size() && plateaus_[j + 1].joined_left ? plateaus_[j + 1].floor : kWall;
      if (floor < left && floor < right) {
        Well w{.first = first,
               .end = end,
               .floor = floor,
               .wall = std::min({left, right, capacity_}),
               .left = left,
               .right = right};
        if (!examine_cached(w)) {
          add_well(i, w);
          return Outcome::kInfeasible;
        }
        if (w.choices < best.choices || (w.choices == best.choices && floor < best.floor)) best = w;
      } else if (!step_coverable(i, j, left, right)) {
        return Outcome::kInfeasible;
      }
    }
    ML_CHECK(best.choices != std::numeric_limits<int32_t>::max(), "no well in sections [{}, {})", lo, hi);
    Frame& f = frames_[i];
    f.kind = best.open < 0 ? Kind::kRaise : Kind::kBranch;
    f.stage = 0;
    f.well = best;
    return std::nullopt;
  }

  // The sections [lo, hi) fall apart into runs that no unplaced buffer joins; each is solved
  // on its own, and a failure in one is a failure of the whole (the others cannot help).
  std::optional<Outcome> step_parts(size_t i, Outcome child) {
    Frame& f = frames_[i];
    if (f.stage == 0) {
      f.stage = 1;
      f.next = static_cast<size_t>(f.lo);
    } else if (child != Outcome::kFound) {
      if (child == Outcome::kInfeasible) add_conflict(i, i + 1);
      return child;
    }
    int32_t first = static_cast<int32_t>(f.next);
    while (first < f.hi && !live(first)) ++first;
    if (first >= f.hi) return Outcome::kFound;
    int32_t end = first + 1;
    while (end < f.hi && live(end) && joined(end - 1)) ++end;
    if (first == f.lo && end == f.hi) {  // one part: search it in this frame
      f.kind = Kind::kSearch;
      f.stage = 0;
      return std::nullopt;
    }
    f.next = static_cast<size_t>(end);
    call(Kind::kSearch, first, end);
    return std::nullopt;
  }

  std::optional<Outcome> step_raise(size_t i, Outcome child) {
    Frame& f = frames_[i];
    const Well& w = f.well;
    if (f.stage == 1) {
      std::fill(height_.begin() + w.first, height_.begin() + w.end, w.floor);
      stamps_.touch(w.first, w.end);
      refresh(w.first, w.end + 1);
      if (child == Outcome::kInfeasible) {
        add_conflict(i, i + 1);
        if (meets(i + 1, w.first, w.end)) add_well(i, w);
      }
      return child;
    }
    f.stage = 1;
    std::fill(height_.begin() + w.first, height_.begin() + w.end, w.wall);
    stamps_.touch(w.first, w.end);
    refresh(w.first, w.end + 1);
    call(Kind::kSearch, f.lo, f.hi);
    return std::nullopt;
  }

  std::optional<Outcome> step_branch(size_t i, Outcome child) {
    Frame& f = frames_[i];
    const Well& w = f.well;
    if (f.stage == 0) {
      f.begin = f.next = pool_.size();
      // The buffer directly below the open position with its top at the floor, when one
      // starts in this section (a stack of buffers with one lifetime).
      int32_t below = -1;
      for (const int32_t k : starters_[w.open]) {
        if (!is_hole(k) && offset_[k] >= 0 && offset_[k] + s_.size[k] == w.floor) below = k;
      }
      int32_t position = 0;
      for (const int32_t k : starters_[w.open]) {
        ++position;
        if (!fits(k, w)) continue;
        // Two buffers of one lifetime stacked directly can swap places: if this one was
        // tried (and failed) where the one below it now lies, it need not go on top of it.
        if (below >= 0 && !is_hole(k) && s_.hi[below] == s_.hi[k] && s_.alignment[k] == 1 && s_.alignment[below] == 1 &&
            tried_before(below, k))
          continue;
        // Flush edges first: a buffer that reaches the next wall in time, or whose top meets
        // a neighbour's height, leaves no new step behind.
        const int64_t top = aligned(w.floor, k) + s_.size[k];
        const int64_t flush = (s_.hi[k] == w.limit ? 2 : 0) + (w.open == w.first && top == w.left ? 2 : 0) +
                              (s_.hi[k] == w.end && top == w.right ? 1 : 0);
        pool_.emplace_back(-flush * (int64_t{1} << 32) + perturbation_.place(position), k);
      }
      f.end = pool_.size();
      std::sort(pool_.begin() + static_cast<std::ptrdiff_t>(f.begin), pool_.end());
      f.stage = 1;
    } else if (f.stage == 1) {
      if (child != Outcome::kInfeasible) {
        pool_.resize(f.begin);
        return child;
      }
      if (!meets(i + 1, w.first, w.end)) {
        // The failure lies elsewhere in time: no other choice here can mend it.
        add_conflict(i, i + 1);
        pool_.resize(f.begin);
        return Outcome::kInfeasible;
      }
      add_conflict(i, i + 1);
    } else {  // the open position was left empty
      empty_at_[w.open] = f.saved;
      stamps_.touch(w.open, w.open + 1);
      if (child == Outcome::kInfeasible) {
        add_conflict(i, i + 1);
        if (meets(i + 1, w.first, w.end)) add_well(i, w);
      }
      return child;
    }
    if (f.next < f.end) {
      const int32_t k = pool_[f.next++].second;
      tried_[k] = {f.begin, f.next - 1};
      const int64_t floor = w.floor;
      const int32_t lo = f.lo, hi = f.hi;
      push(Frame{.kind = Kind::kPlace, .lo = lo, .hi = hi, .buffer = k, .floor = floor});
      return std::nullopt;
    }
    pool_.resize(f.begin);
    if (!w.may_leave_empty) {
      add_well(i, w);
      return Outcome::kInfeasible;
    }
    f.saved = empty_at_[w.open];
    empty_at_[w.open] = w.floor;
    stamps_.touch(w.open, w.open + 1);
    f.stage = 2;
    call(Kind::kSearch, f.lo, f.hi);
    return std::nullopt;
  }

  std::optional<Outcome> step_place(size_t i, Outcome child) {
    Frame& f = frames_[i];
    const int32_t k = f.buffer;
    const int64_t counted = is_hole(k) ? 0 : s_.size[k];  // a hole candidate is no required size
    if (f.stage == 1) {
      for (int32_t t = s_.lo[k]; t + 1 < s_.hi[k] && counted; ++t) ++cuts_[t];
      for (int32_t t = s_.lo[k]; t < s_.hi[k]; ++t) {
        height_[t] = f.floor;
        remaining_[t] += counted;
      }
      offset_[k] = -1;
      unplaced_ += counted ? 1 : 0;
      stamps_.touch(s_.lo[k], s_.hi[k]);
      refresh(s_.lo[k], s_.hi[k] + 1);
      if (child == Outcome::kInfeasible) add_conflict(i, i + 1);
      return child;
    }
    f.stage = 1;
    const int64_t offset = aligned(f.floor, k);
    const int64_t top = offset + s_.size[k];
    offset_[k] = offset;
    stamps_.touch(s_.lo[k], s_.hi[k]);
    solution_[k] = offset;
    bool split = false;
    for (int32_t t = s_.lo[k]; t < s_.hi[k]; ++t) {
      height_[t] = top;
      remaining_[t] -= counted;
      split = split || (counted && remaining_[t] == 0);
    }
    for (int32_t t = s_.lo[k]; t + 1 < s_.hi[k] && counted; ++t) split = --cuts_[t] == 0 || split;
    refresh(s_.lo[k], s_.hi[k] + 1);
    unplaced_ -= counted ? 1 : 0;
    call(split && !hole_mode_ ? Kind::kParts : Kind::kSearch, f.lo, f.hi);
    return std::nullopt;
  }

  // A step of the skyline (a plateau [first, end) higher than one neighbour, lower than the
  // other) at a section without slack: the next byte at its edge by the higher neighbour must
  // be covered, by a buffer resting on the plateau that starts (ends) at that edge — it cannot
  // reach over the higher neighbour, nor past the next section higher than the plateau on the
  // other side. False (with the sections that say so in frame i's conflict set) when none is
  // left.
  bool step_coverable(size_t i, size_t j, int64_t left, int64_t right) {
    const Plateau& p = plateaus_[j];
    const int32_t first = p.first, end = p.end;
    const int64_t floor = p.floor;
    // (with hole candidates, only they may cover what is not full)
    if (left > floor && right < floor && (slack(first) == 0 || hole_mode_) && !is_empty(first)) {
      size_t q = j + 1;  // the first plateau after this one higher than it, or a break
      while (q < plateaus_.size() && plateaus_[q].joined_left && plateaus_[q].floor <= floor) ++q;
      const int32_t wall = plateaus_[q - 1].end;  // the first section after the plateau higher than it
      for (const int32_t k : starters_[first]) {
        if (offset_[k] < 0 && s_.hi[k] <= wall && aligned(floor, k) == floor && s_.size[k] <= capacity_ - floor &&
            (!is_hole(k) || hole_fits(k)))
          return true;
      }
      add_sections(i, first - 1, wall + 1);
      return false;
    }
    if (left < floor && right > floor && (slack(end - 1) == 0 || hole_mode_) && !is_empty(end - 1)) {
      size_t q = j;  // the first plateau of the run before this one no higher than it
      while (plateaus_[q].joined_left && plateaus_[q - 1].floor <= floor) --q;
      const int32_t wall = plateaus_[q].first - 1;  // the last section before the plateau higher than it
      for (const int32_t k : enders_[end - 1]) {
        if (offset_[k] < 0 && s_.lo[k] > wall && aligned(floor, k) == floor && s_.size[k] <= capacity_ - floor &&
            (!is_hole(k) || hole_fits(k)))
          return true;
      }
      add_sections(i, wall, end + 1);
      return false;
    }
    return true;
  }

  // Whether buffer k was a candidate tried before `placed` at the position where `placed` went.
  bool tried_before(int32_t placed, int32_t k) const {
    for (size_t j = tried_[placed].first; j < tried_[placed].second; ++j) {
      if (pool_[j].second == k) return true;
    }
    return false;
  }

  bool is_hole(int32_t k) const { return static_cast<size_t>(k) >= first_hole_; }
  // A hole candidate resting on the floor takes its size from the slack of each of its sections.
  // Asked several times per node (by the wells and steps it lies in), answered once per state.
  bool hole_fits(int32_t k) const {
    HoleFit& memo = hole_fit_[static_cast<size_t>(k) - first_hole_];
    if (memo.stamp == stamps_.now() + 1) return memo.fits;
    memo = {.stamp = stamps_.now() + 1, .fits = true};
    for (int32_t t = s_.lo[k]; t < s_.hi[k]; ++t) {
      if (slack(t) < s_.size[k]) return memo.fits = false;
    }
    return true;
  }
  bool waits_for_twin(int32_t k) const { return twin_before_[k] >= 0 && offset_[twin_before_[k]] < 0; }
  int64_t slack(int32_t t) const { return capacity_ - height_[t] - remaining_[t]; }
  bool is_empty(int32_t t) const { return empty_at_[t] == height_[t]; }
  // Unplaced buffers live in section t.
  // With hole candidates, a section that held buffers stays open until it is full (the
  // candidates and the positions left empty fill it, as in a perfect packing), and the search
  // does not split: a candidate may span sections that no buffer joins.
  bool live(int32_t t) const { return remaining_[t] > 0 || (hole_mode_ && height_[t] < capacity_ && held_[t]); }
  // Sections t and t + 1 belong to one plateau only when some unplaced buffer spans both.
  bool joined(int32_t t) const { return hole_mode_ || cuts_[t] > 0; }
  // Section t begins a plateau: it is live, and the section before it is not, is not joined to
  // it or lies at another height.
  bool begins_plateau(int32_t t) const {
    return live(t) && (t == 0 || !live(t - 1) || !joined(t - 1) || height_[t - 1] != height_[t]);
  }
  // Keeps live_bits_ and edge_bits_ for sections [first, end) after a change to the heights,
  // the bytes left or the cuts of sections [first, end - 1).
  void refresh(int32_t first, int32_t end) {
    for (int32_t t = std::max(first, 0); t < std::min(end, s_.sections); ++t) {
      const uint64_t bit = uint64_t{1} << (t & 63);
      const size_t w = static_cast<size_t>(t >> 6);
      const bool is_live = live(t);
      live_bits_[w] = is_live ? live_bits_[w] | bit : live_bits_[w] & ~bit;
      edge_bits_[w] = !is_live || begins_plateau(t) ? edge_bits_[w] | bit : edge_bits_[w] & ~bit;
    }
  }
  static bool has_bit(const std::vector<uint64_t>& bits, int32_t t) {
    return (bits[static_cast<size_t>(t >> 6)] >> (t & 63) & 1) != 0;
  }
  // The first set bit at or after t, or `end` when none lies before it.
  static int32_t next_bit(const std::vector<uint64_t>& bits, int32_t t, int32_t end) {
    if (t >= end) return end;
    size_t w = static_cast<size_t>(t >> 6);
    uint64_t word = bits[w] & (~uint64_t{0} << (t & 63));
    while (word == 0) {
      if (static_cast<int32_t>(++w * 64) >= end) return end;
      word = bits[w];
    }
    return std::min(static_cast<int32_t>(w * 64) + std::countr_zero(word), end);
  }

  int64_t aligned(int64_t offset, int32_t k) const {
    const int64_t a = s_.alignment[k];
    return a == 1 ? offset : (offset + a - 1) / a * a;
  }

  // Whether buffer k can go at the well's open position.
  bool fits(int32_t k, const Well& w) const {
    if (offset_[k] >= 0 || s_.hi[k] > w.limit || waits_for_twin(k)) return false;
    if (is_hole(k)) return hole_fits(k);
    const int64_t gap = aligned(w.floor, k) - w.floor;
    if (gap == 0) return true;
    for (int32_t t = s_.lo[k]; t < s_.hi[k]; ++t) {
      if (slack(t) < gap) return false;
    }
    return true;
  }

  // examine(w), or its result from the last time, when the same well (sections, floor and
  // wall) was examined and none of its sections has changed since: what examine reads lies in
  // the well's sections only. Most nodes change one well and leave the others as they were.
  bool examine_cached(Well& w) {
    Examined& e = examined_[w.first];
    const Well& kept = e.well;
    auto unchanged = [&] {
      for (int32_t t = w.first; t < w.end; ++t) {
        if (stamps_.at(t) > e.stamp) return false;
      }
      return true;
    };
    if (kept.end == w.end && kept.floor == w.floor && kept.wall == w.wall && unchanged()) {
      w.open = kept.open;
      w.limit = kept.limit;
      w.choices = kept.choices;
      w.may_leave_empty = kept.may_leave_empty;
      return e.fillable;
    }
    const bool fillable = examine(w);
    e = Examined{.stamp = stamps_.now(), .well = w, .fillable = fillable};
    return fillable;
  }

  // Fills in the well's open position and choices; false when the well cannot be filled.
  bool examine(Well& w) {
    // The buffers that live within the well can fill it up to the lower wall; what they do
    // not fill stays empty, and that must not exceed any section's slack (with hole
    // candidates: what the candidates within the well can fill).
    std::fill(within_.begin() + w.first, within_.begin() + w.end + 1, 0);
    if (hole_mode_) std::fill(holes_within_.begin() + w.first, holes_within_.begin() + w.end + 1, 0);
    for (int32_t t = w.first; t < w.end; ++t) {
      smallest_[t] = std::numeric_limits<int64_t>::max();
      for (const int32_t k : starters_[t]) {
        if (offset_[k] >= 0 || s_.hi[k] > w.end) continue;
        if (is_hole(k)) {
          if (hole_mode_ && hole_fits(k)) {
            holes_within_[t] += s_.size[k];
            holes_within_[s_.hi[k]] -= s_.size[k];
          }
          continue;
        }
        within_[t] += s_.size[k];
        within_[s_.hi[k]] -= s_.size[k];
        smallest_[t] = std::min(smallest_[t], s_.size[k]);
      }
    }
    int64_t within = 0, holes_within = 0;
    for (int32_t t = w.first; t < w.end; ++t) {
      within += within_[t];
      holes_within += hole_mode_ ? holes_within_[t] : 0;
      const int64_t waste = hole_mode_ ? std::min(slack(t), holes_within) : slack(t);
      if (waste < w.wall - w.floor - within) return false;
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
      // Dominance: the positions were left empty from left to right, each after every buffer
      // that could start there had been tried and failed. An unplaced buffer that lies within
      // the well and fits under the wall could move down into the hole of any completion,
      // which (made canonical again) is a solution in a branch already searched: none.
      for (int32_t t = w.first; t < w.end; ++t) {
        for (const int32_t k : starters_[t]) {
          if (!is_hole(k) && offset_[k] < 0 && s_.hi[k] <= w.end && aligned(w.floor, k) == w.floor &&
              s_.size[k] <= w.wall - w.floor)
            return false;
        }
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
      if (slack(t) >= 1 && !hole_mode_) reach_[t + 1] = 1;
      for (const int32_t k : starters_[t]) {
        if (offset_[k] < 0 && s_.hi[k] <= w.limit && (!is_hole(k) || hole_fits(k))) reach_[s_.hi[k]] = 1;
      }
    }
    if (!reach_[w.limit]) return false;
    w.choices = 0;
    for (const int32_t k : starters_[w.open]) w.choices += fits(k, w) ? 1 : 0;
    // If the open byte stays empty, the next buffer above it in this section rests on a
    // wall or on a buffer placed later in the well to its right: that many bytes are lost.
    int64_t lost = w.wall - w.floor;
    for (int32_t t = w.open + 1; t < w.end; ++t) lost = std::min(lost, smallest_[t]);
    w.may_leave_empty = !hole_mode_ && slack(w.open) >= std::max<int64_t>(lost, 1);
    w.choices += w.may_leave_empty ? 1 : 0;
    return w.choices > 0;
  }

  const Sections& s_;
  const size_t first_hole_;
  const bool hole_mode_;  // the slack is the hole candidates' to fill
  skyline::Perturbation perturbation_;
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
  std::vector<std::vector<int32_t>> enders_;    // per section: buffers whose last section it is
  struct Plateau {
    int32_t first = 0, end = 0;
    int64_t floor = 0;
    bool joined_left = false;  // the plateau before it ends where this one begins, joined to it
  };
  std::vector<Plateau> plateaus_;  // scratch for step_search()
  // A well's examination, kept per first section (examine_cached).
  struct Examined {
    uint64_t stamp = 0;  // stamps_.now() when it was made
    Well well;           // the well examined (end 0 at first: no well matches it)
    bool fillable = false;
  };
  std::vector<Examined> examined_;
  skyline::SectionStamps stamps_;                  // when each section's heights, contents or empty marks last changed
  std::vector<int64_t> within_;                    // scratch for examine()
  std::vector<int64_t> smallest_;                  // scratch for examine(): per section, the smallest buffer
                                                   // starting there within the well
  std::vector<char> reach_;                        // scratch for examine()
  std::vector<Frame> frames_;                      // the search's stack
  std::vector<std::pair<int64_t, int32_t>> pool_;  // the kBranch frames' candidates: (order key, buffer)
  std::vector<std::pair<size_t, size_t>> tried_;   // per placed buffer: the candidates in pool_ tried before it
  size_t words_ = 1;                               // per conflict set
  std::vector<uint64_t> conflicts_;                // one conflict set per frame
  std::vector<int64_t> holes_within_;              // scratch for examine()
  std::vector<char> held_;                         // per section: some buffer lives there
  struct HoleFit {
    uint64_t stamp = 0;  // stamps_.now() + 1 when answered
    bool fits = false;
  };
  mutable std::vector<HoleFit> hole_fit_;  // per hole candidate: hole_fits() in the state of `stamp`
  std::vector<uint64_t> live_bits_;        // per section: live()
  std::vector<uint64_t> edge_bits_;        // per section: not live, or begins a plateau
  int64_t unplaced_ = 0;                   // buffers (not hole candidates) not placed
  int64_t nodes_ = 0;
  int64_t node_limit_ = 0;
};

}  // namespace

bool decision_search_is_complete(const Problem& problem) { return build_shape(problem).complete; }

namespace {

DecisionResult decide(const Problem& problem, const std::vector<Buffer>* holes, int64_t capacity,
                      Clock::time_point deadline, const std::function<void(int64_t nodes)>& on_tick, int64_t max_nodes,
                      SearchProgress* resume) {
  DecisionResult result;
  if (has_fixed_offsets(problem) || capacity < 0) return result;
  const Shape shape = build_shape(problem, holes);
  const Sections& forward = shape.sections;
  const int64_t units = capacity / shape.unit;
  if (shape.first_hole == 0) {
    result.outcome = DecisionResult::Outcome::kFound;
    result.offsets.assign(problem.buffers.size(), 0);
    return result;
  }
  const skyline::Restarts run = skyline::run_restarts(
      forward, deadline,
      [&](const Sections& s, const skyline::Round& r, int64_t before) {
        return WellSearch(s, shape.first_hole, holes != nullptr, units, r.branching, r.seed, deadline, on_tick, before);
      },
      max_nodes, resume);
  result.nodes = run.nodes;
  result.restarts = run.restarts;
  if (run.outcome == Outcome::kFound) {
    result.outcome = DecisionResult::Outcome::kFound;
    result.offsets.assign(problem.buffers.size(), 0);
    for (size_t k = 0; k < shape.first_hole; ++k) result.offsets[forward.index[k]] = run.offsets[k] * shape.unit;
  } else if (run.outcome == Outcome::kInfeasible && shape.complete && !holes) {
    result.outcome = DecisionResult::Outcome::kInfeasible;
  }
  return result;
}

}  // namespace

DecisionResult decide_placement(const Problem& problem, int64_t capacity, Clock::time_point deadline,
                                const std::function<void(int64_t nodes)>& on_tick, int64_t max_nodes,
                                SearchProgress* resume) {
  return decide(problem, nullptr, capacity, deadline, on_tick, max_nodes, resume);
}

DecisionResult decide_placement_with_holes(const Problem& problem, const std::vector<Buffer>& holes, int64_t capacity,
                                           Clock::time_point deadline,
                                           const std::function<void(int64_t nodes)>& on_tick, int64_t max_nodes,
                                           SearchProgress* resume) {
  return decide(problem, &holes, capacity, deadline, on_tick, max_nodes, resume);
}

}  // namespace memledger::allocate
