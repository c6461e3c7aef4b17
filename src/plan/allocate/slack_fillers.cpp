#include "memledger/plan/allocate/slack_fillers.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "split_mix.h"

namespace memledger::allocate {
namespace {

// The room left per section (between consecutive distinct steps), then a 0 that closes
// every filler.
struct Profile {
  std::vector<int64_t> steps;
  std::vector<int64_t> slack;  // steps.size() entries: one per section, then the sentinel
};

std::optional<Profile> slack_profile(const Problem& problem, int64_t capacity) {
  Profile p;
  for (const Buffer& b : problem.buffers) {
    if (b.size == 0) continue;
    p.steps.push_back(b.lower);
    p.steps.push_back(b.upper);
  }
  if (p.steps.empty()) return std::nullopt;
  std::sort(p.steps.begin(), p.steps.end());
  p.steps.erase(std::unique(p.steps.begin(), p.steps.end()), p.steps.end());
  auto index_of = [&](int64_t step) {
    return std::lower_bound(p.steps.begin(), p.steps.end(), step) - p.steps.begin();
  };
  // Live bytes per section by a difference array.
  const size_t sections = p.steps.size() - 1;
  p.slack.assign(sections + 1, 0);
  for (const Buffer& b : problem.buffers) {
    if (b.size == 0) continue;
    p.slack[index_of(b.lower)] += b.size;
    p.slack[index_of(b.upper)] -= b.size;
  }
  int64_t live = 0;
  for (size_t k = 0; k < sections; ++k) {
    live += p.slack[k];
    if (live > capacity) return std::nullopt;
    p.slack[k] = capacity - live;
  }
  p.slack[sections] = 0;
  return p;
}

struct Piece {
  size_t first, end;  // sections [first, end)
  int64_t size;
};

// The profile's layers by one sweep: a stack of (first section, height) with rising
// heights; where the profile drops, each layer above the new height ends there.
std::vector<Piece> layers(const Profile& p) {
  struct Open {
    size_t first;
    int64_t height;
  };
  std::vector<Piece> pieces;
  std::vector<Open> open;
  for (size_t k = 0; k < p.slack.size(); ++k) {
    size_t first = k;
    while (!open.empty() && open.back().height > p.slack[k]) {
      const Open top = open.back();
      open.pop_back();
      const int64_t base = std::max(p.slack[k], open.empty() ? int64_t{0} : open.back().height);
      pieces.push_back({top.first, k, top.height - base});
      first = top.first;
    }
    if (p.slack[k] > (open.empty() ? 0 : open.back().height)) open.push_back({first, p.slack[k]});
  }
  return pieces;
}

// Up to three of the open heights (indices into `order`'s order) that add up to `target`.
std::vector<size_t> exact_subset(const std::vector<int64_t>& heights, const std::vector<size_t>& order,
                                 int64_t target) {
  const size_t n = order.size();
  for (size_t a = 0; a < n; ++a) {
    const int64_t ha = heights[order[a]];
    if (ha == target) return {order[a]};
  }
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      if (heights[order[a]] + heights[order[b]] == target) return {order[a], order[b]};
    }
  }
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      const int64_t hab = heights[order[a]] + heights[order[b]];
      if (hab >= target) continue;
      for (size_t c = b + 1; c < n; ++c) {
        if (hab + heights[order[c]] == target) return {order[a], order[b], order[c]};
      }
    }
  }
  return {};
}

// A random decomposition by one sweep over the sections, as the pieces removed from a full
// placement would give it: where the profile rises, a new filler starts; where it drops,
// fillers whose heights add up to the drop end there when there are such (up to three, the
// first found in a random order of the open fillers), otherwise fillers in a random order
// until the drop is covered, the last one split (its lower part ends there, the rest goes
// on, as in the layers). With probability `replace`, a change of the profile that no open
// filler matches exactly is read the other way: an open filler ends there and one of its
// height plus the change starts (a hole that ends where another begins, which a rise or a drop
// alone does not tell apart from one that goes on).
std::vector<Piece> random_sweep(const Profile& p, uint64_t seed, double replace = 0) {
  SplitMix64 rng(seed);
  std::vector<Piece> pieces;
  std::vector<size_t> first;    // of the open fillers
  std::vector<int64_t> height;  // of the open fillers
  auto close = [&](size_t i, size_t k) {
    pieces.push_back({first[i], k, height[i]});
    first[i] = first.back();
    height[i] = height.back();
    first.pop_back();
    height.pop_back();
  };
  int64_t open_bytes = 0;
  for (size_t k = 0; k < p.slack.size(); ++k) {
    const int64_t target = p.slack[k];
    const int64_t change = target - open_bytes;
    const bool matched = std::find(height.begin(), height.end(), -change) != height.end();
    if (change != 0 && !matched && !first.empty() && replace > 0 && rng.chance(replace)) {
      std::vector<size_t> can;
      for (size_t i = 0; i < height.size(); ++i) {
        if (height[i] + change > 0) can.push_back(i);
      }
      if (!can.empty()) {
        const size_t i = can[rng.below(can.size())];
        const int64_t grown = height[i] + change;
        close(i, k);
        first.push_back(k);
        height.push_back(grown);
        open_bytes = target;
        continue;
      }
    }
    if (target < open_bytes) {
      int64_t drop = open_bytes - target;
      std::vector<size_t> order(first.size());
      std::iota(order.begin(), order.end(), size_t{0});
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
      std::vector<size_t> ending = exact_subset(height, order, drop);
      if (ending.empty()) {
        for (const size_t i : order) {
          if (drop == 0) break;
          if (height[i] <= drop) {
            drop -= height[i];
            ending.push_back(i);
          } else {
            pieces.push_back({first[i], k, drop});
            height[i] -= drop;
            drop = 0;
          }
        }
      }
      // Close from the back, so that moving the last open filler into a closed one's place
      // never moves one still to close.
      std::sort(ending.rbegin(), ending.rend());
      for (const size_t i : ending) close(i, k);
    } else if (target > open_bytes) {
      first.push_back(k);
      height.push_back(target - open_bytes);
    }
    open_bytes = target;
  }
  return pieces;
}

Buffer filler(const Profile& profile, const Piece& piece, std::string id) {
  return Buffer{.id = std::move(id),
                .size = piece.size,
                .alignment = 1,
                .lower = profile.steps[piece.first],
                .upper = profile.steps[piece.end],
                .fixed_offset = std::nullopt};
}

// Sums of up to `most` of `sizes`, with how many went in (visits the empty sum too).
template <class Visit>
void subset_sums(const std::vector<int64_t>& sizes, int most, const Visit& visit, size_t from = 0, int64_t sum = 0,
                 int count = 0) {
  visit(sum, count);
  if (count == most) return;
  for (size_t i = from; i < sizes.size(); ++i) subset_sums(sizes, most, visit, i + 1, sum + sizes[i], count + 1);
}

// Where many buffers meet at one step, fewer of them go into a sum, so that each side of an
// edge has at most kMaxEdgeSums sums (none when even single buffers are more): how many of
// `sizes` buffers a sum may take.
constexpr int64_t kMaxEdgeSums = 4096;

int affordable(size_t sizes, int most) {
  int m = 0;
  for (int64_t total = 1, choose = 1; m < most; ++m) {  // choose = C(sizes, m + 1) as the loop goes
    choose = choose * (static_cast<int64_t>(sizes) - m) / (m + 1);
    total += choose;
    if (total > kMaxEdgeSums) break;
  }
  return m;
}

// The sums a hole's edge is read from (edge_holes): those of at least one of the buffers
// beside the edge (ending where the hole starts, or starting where it ends) and those of any
// of the buffers across it (starting, or ending, there too), up to `most` of each (fewer where
// they are many), the latter sorted.
struct EdgeSums {
  std::vector<int64_t> beside, across;
  EdgeSums(const std::vector<int64_t>& beside_sizes, const std::vector<int64_t>& across_sizes, int most) {
    subset_sums(beside_sizes, affordable(beside_sizes.size(), most), [&](int64_t sum, int count) {
      if (count > 0) beside.push_back(sum);
    });
    subset_sums(across_sizes, affordable(across_sizes.size(), most), [&](int64_t sum, int) { across.push_back(sum); });
    std::sort(across.begin(), across.end());
  }
  // Some of the buffers beside minus some across make `height`.
  bool give(int64_t height) const {
    return std::any_of(beside.begin(), beside.end(),
                       [&](int64_t sum) { return std::binary_search(across.begin(), across.end(), sum - height); });
  }
};

}  // namespace

std::vector<Buffer> edge_holes(const Problem& problem, int64_t capacity, const std::vector<Buffer>& candidates,
                               const EdgeReading& reading) {
  std::optional<Profile> profile = slack_profile(problem, capacity);
  if (!profile) return {};
  const std::vector<int64_t>& steps = profile->steps;
  auto index_of = [&](int64_t step) {
    return static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };
  std::vector<std::vector<int64_t>> ending(steps.size()), starting(steps.size());
  for (const Buffer& b : problem.buffers) {
    if (b.size == 0) continue;
    ending[index_of(b.upper)].push_back(b.size);
    starting[index_of(b.lower)].push_back(b.size);
  }
  // What a hole's height is read from where it starts (ends) at each step, built when first asked for.
  std::vector<std::optional<EdgeSums>> starts(steps.size()), ends(steps.size());
  auto fits = [&](std::optional<EdgeSums>& sums, const std::vector<int64_t>& beside, const std::vector<int64_t>& across,
                  int64_t height) {
    if (!sums) sums.emplace(beside, across, reading.most);
    return sums->give(height);
  };
  // How many candidates read each height at each step, where they start and where they end.
  std::map<std::pair<int64_t, int64_t>, int> read_starting, read_ending;
  for (const Buffer& c : candidates) {
    ++read_starting[{c.lower, c.size}];
    ++read_ending[{c.upper, c.size}];
  }
  // Each edge read (a step and a height) gives one hole: two candidates of one height from one
  // step are one hole read twice, at most one of them right. Candidates read at both edges go
  // first, then those at the problem's first or last step (read at one edge only).
  std::set<std::pair<int64_t, int64_t>> taken_starting, taken_ending;
  std::vector<Buffer> holes;
  auto take = [&](const Buffer& c, bool open_edge) {
    if (c.size <= 0 || c.lower >= c.upper || !std::binary_search(steps.begin(), steps.end(), c.lower) ||
        !std::binary_search(steps.begin(), steps.end(), c.upper))
      return;
    const size_t first = index_of(c.lower), end = index_of(c.upper);
    const bool open_start = first == 0, open_end = end + 1 == steps.size();
    if ((open_start && open_end) || (open_start || open_end) != open_edge) return;  // nothing to read at either edge
    if (!reading.ambiguous_open && ((open_end && read_starting.at({c.lower, c.size}) > 1) ||
                                    (open_start && read_ending.at({c.upper, c.size}) > 1)))
      return;
    if (taken_starting.contains({c.lower, c.size}) || taken_ending.contains({c.upper, c.size})) return;
    if (!open_start && !fits(starts[first], ending[first], starting[first], c.size)) return;
    if (!open_end && !fits(ends[end], starting[end], ending[end], c.size)) return;
    bool room = true;
    for (size_t k = first; k < end && room; ++k) room = profile->slack[k] >= c.size;
    if (!room) return;
    for (size_t k = first; k < end; ++k) profile->slack[k] -= c.size;
    if (!open_start) taken_starting.insert({c.lower, c.size});
    if (!open_end) taken_ending.insert({c.upper, c.size});
    Buffer hole = c;
    hole.id = "edge-hole-" + std::to_string(holes.size());
    hole.fixed_offset.reset();
    holes.push_back(std::move(hole));
  };
  for (const bool open_edge : {false, true}) {
    for (const Buffer& c : candidates) take(c, open_edge);
  }
  return holes;
}

std::optional<Problem> with_slack_fillers(const Problem& problem, int64_t capacity, const FillerShape& shape) {
  const std::optional<Profile> profile = slack_profile(problem, capacity);
  if (!profile) return std::nullopt;
  const std::vector<Piece> pieces = shape.seed == 0 ? layers(*profile) : random_sweep(*profile, shape.seed);
  Problem filled = problem;
  for (size_t k = 0; k < pieces.size(); ++k) {
    filled.buffers.push_back(filler(*profile, pieces[k], "slack-filler-" + std::to_string(k)));
  }
  return filled;
}

std::vector<Buffer> slack_hole_candidates(const Problem& problem, int64_t capacity, const HoleCandidates& options) {
  const std::optional<Profile> profile = slack_profile(problem, capacity);
  if (!profile) return {};
  std::vector<Piece> pieces = random_sweep(*profile, 1);
  for (int k = 0; k < options.decompositions; ++k) {
    const std::vector<Piece> more = random_sweep(*profile, options.seed + static_cast<uint64_t>(k), options.replace);
    pieces.insert(pieces.end(), more.begin(), more.end());
  }
  auto key = [](const Piece& a) { return std::tuple(a.first, a.end, a.size); };
  std::sort(pieces.begin(), pieces.end(), [&](const Piece& a, const Piece& b) { return key(a) < key(b); });
  pieces.erase(
      std::unique(pieces.begin(), pieces.end(), [&](const Piece& a, const Piece& b) { return key(a) == key(b); }),
      pieces.end());
  std::vector<Buffer> holes;
  for (size_t k = 0; k < pieces.size(); ++k) holes.push_back(filler(*profile, pieces[k], "hole-" + std::to_string(k)));
  return holes;
}

EdgeHoles with_edge_holes(const Problem& problem, int64_t capacity, const std::vector<Buffer>& candidates, int rounds,
                          const EdgeReading& reading) {
  EdgeHoles out{.problem = problem, .candidates = candidates};
  for (int round = 0; round < rounds; ++round) {
    std::vector<Buffer> more = edge_holes(out.problem, capacity, out.candidates, reading);
    if (more.empty()) break;
    for (Buffer& hole : more) {
      hole.id = "edge-hole-" + std::to_string(out.taken++);
      out.problem.buffers.push_back(std::move(hole));
    }
    out.candidates = slack_hole_candidates(out.problem, capacity);
  }
  return out;
}

}  // namespace memledger::allocate
