#include "memledger/plan/allocate/generator.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "memledger/core/error.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "split_mix.h"

namespace memledger::allocate {
namespace {

struct Piece {
  int64_t lower, upper;  // steps
  int64_t offset, end;   // bytes
};

std::vector<Piece> guillotine(SplitMix64& rng, int64_t count, int64_t capacity) {
  std::vector<Piece> pieces = {{0, std::max<int64_t>(count, 2), 0, capacity}};
  while (static_cast<int64_t>(pieces.size()) < count) {
    // Prefer big pieces (pick the larger of two at random), else slivers multiply.
    size_t i = rng.uniform(0, static_cast<int64_t>(pieces.size()) - 1);
    const size_t j = rng.uniform(0, static_cast<int64_t>(pieces.size()) - 1);
    auto area = [&](size_t k) {
      return static_cast<double>(pieces[k].upper - pieces[k].lower) *
             static_cast<double>(pieces[k].end - pieces[k].offset);
    };
    if (area(j) > area(i)) i = j;
    Piece p = pieces[i];
    const bool can_time = p.upper - p.lower >= 2;
    const bool can_bytes = p.end - p.offset >= 2;
    if (!can_time && !can_bytes) continue;
    const bool across_time = can_time && (!can_bytes || rng.chance(0.5));
    Piece q = p;
    if (across_time) {
      const int64_t cut = rng.uniform(p.lower + 1, p.upper - 1);
      p.upper = cut;
      q.lower = cut;
    } else {
      const int64_t cut = rng.uniform(p.offset + 1, p.end - 1);
      p.end = cut;
      q.offset = cut;
    }
    pieces[i] = p;
    pieces.push_back(q);
  }
  return pieces;
}

// Cuts [offset, end) into `parts` non-empty spans at distinct random points.
std::vector<std::pair<int64_t, int64_t>> split_bytes(SplitMix64& rng, int64_t offset, int64_t end, int64_t parts) {
  parts = std::min(parts, end - offset);
  std::vector<int64_t> cuts;
  while (static_cast<int64_t>(cuts.size()) < parts - 1) {
    const int64_t cut = rng.uniform(offset + 1, end - 1);
    if (std::find(cuts.begin(), cuts.end(), cut) == cuts.end()) cuts.push_back(cut);
  }
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::pair<int64_t, int64_t>> spans;
  int64_t at = offset;
  for (const int64_t cut : cuts) {
    spans.emplace_back(at, cut);
    at = cut;
  }
  spans.emplace_back(at, end);
  return spans;
}

std::vector<Piece> brick(SplitMix64& rng, int64_t count, int64_t capacity) {
  constexpr int64_t kMinLive = 3, kMaxLive = 24;  // pieces live at once
  std::vector<Piece> done;
  std::vector<Piece> live;  // ordered by offset, tiling [0, capacity)
  int64_t step = 0;
  for (const auto& [offset, end] : split_bytes(rng, 0, capacity, std::min(count, rng.uniform(kMinLive, 8)))) {
    live.push_back({step, 0, offset, end});
  }
  while (static_cast<int64_t>(done.size() + live.size()) < count) {
    ++step;
    const int64_t ending = rng.uniform(1, std::min<int64_t>(3, static_cast<int64_t>(live.size())));
    const int64_t first = rng.uniform(0, static_cast<int64_t>(live.size()) - ending);
    int64_t starting = rng.uniform(1, 3);
    const int64_t remaining = count - static_cast<int64_t>(done.size() + live.size());  // pieces still to make
    const int64_t live_after = static_cast<int64_t>(live.size()) - ending;
    if (live_after + starting < kMinLive) starting = kMinLive - live_after;
    if (live_after + starting > kMaxLive) starting = 1;
    starting = std::min(starting, remaining);  // the new pieces add to the count, the ending ones stay in it
    const int64_t offset = live[first].offset;
    const int64_t end = live[first + ending - 1].end;
    for (int64_t k = 0; k < ending; ++k) {
      Piece p = live[first + k];
      p.upper = step;
      done.push_back(p);
    }
    live.erase(live.begin() + first, live.begin() + first + ending);
    std::vector<Piece> fresh;
    for (const auto& [o, e] : split_bytes(rng, offset, end, starting)) fresh.push_back({step, 0, o, e});
    live.insert(live.begin() + first, fresh.begin(), fresh.end());
  }
  ++step;
  for (Piece p : live) {
    p.upper = step;
    done.push_back(p);
  }
  return done;
}

}  // namespace

HardInstance generate_hard_instance(uint64_t seed, int64_t buffers, CutStyle style, int64_t capacity) {
  ML_CHECK(buffers >= 1 && capacity >= buffers, "{} buffers in {} bytes", buffers, capacity);
  SplitMix64 rng(seed);
  std::vector<Piece> pieces =
      style == CutStyle::kGuillotine ? guillotine(rng, buffers, capacity) : brick(rng, buffers, capacity);
  for (size_t i = pieces.size(); i > 1; --i)
    std::swap(pieces[i - 1], pieces[rng.uniform(0, static_cast<int64_t>(i) - 1)]);
  HardInstance instance;
  instance.optimum = capacity;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    instance.problem.buffers.push_back({fmt::format("b{}", i), p.end - p.offset, 1, p.lower, p.upper, std::nullopt});
    instance.witness.push_back(p.offset);
  }
  return instance;
}

SlackInstance generate_slack_instance(uint64_t seed, int64_t buffers, int64_t removed, CutStyle style,
                                      int64_t capacity) {
  ML_CHECK(buffers >= 1 && removed >= 1, "{} buffers, {} removed", buffers, removed);
  HardInstance cut = generate_hard_instance(seed, buffers + removed, style, capacity);
  // Each piece removed is live at a step that is still full, while there is one, so the
  // lower bound drops below the capacity where the share allows.
  SplitMix64 rng(seed ^ 0x5eedc0ffee5eedULL);
  const std::vector<Buffer>& pieces = cut.problem.buffers;
  int64_t steps = 0;
  for (const Buffer& b : pieces) steps = std::max(steps, b.upper);
  std::vector<bool> gone(pieces.size(), false);
  for (int64_t r = 0; r < removed; ++r) {
    std::vector<int64_t> live(steps, 0);
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (gone[i]) continue;
      for (int64_t t = pieces[i].lower; t < pieces[i].upper; ++t) live[t] += pieces[i].size;
    }
    std::vector<int64_t> full;
    for (int64_t t = 0; t < steps; ++t) {
      if (live[t] == capacity) full.push_back(t);
    }
    std::vector<size_t> choice;
    const int64_t at = full.empty() ? -1 : full[rng.uniform(0, static_cast<int64_t>(full.size()) - 1)];
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (!gone[i] && (at < 0 || (pieces[i].lower <= at && at < pieces[i].upper))) choice.push_back(i);
    }
    gone[choice[rng.uniform(0, static_cast<int64_t>(choice.size()) - 1)]] = true;
  }
  SlackInstance instance;
  instance.capacity = capacity;
  for (size_t i = 0; i < cut.problem.buffers.size(); ++i) {
    if (gone[i]) {
      Buffer hole = cut.problem.buffers[i];
      hole.id = fmt::format("removed{}", instance.removed.size());
      hole.fixed_offset = cut.witness[i];
      instance.removed.push_back(std::move(hole));
      continue;
    }
    Buffer b = cut.problem.buffers[i];
    b.id = fmt::format("b{}", instance.problem.buffers.size());
    instance.problem.buffers.push_back(std::move(b));
    instance.witness.push_back(cut.witness[i]);
  }
  instance.lower_bound = lower_bound(instance.problem).bytes;
  return instance;
}

BenchSizes bench_sizes(int64_t k, int64_t count) {
  BenchSizes sizes;
  sizes.buffers = 150 + (k * 300) / std::max<int64_t>(count - 1, 1);
  sizes.percent = 1 + k % 10;
  sizes.removed = std::max<int64_t>(1, (sizes.buffers * sizes.percent + 50) / 100);
  return sizes;
}

Problem generate_random_problem(uint64_t seed, int64_t buffers, int64_t max_size, bool with_alignment) {
  ML_CHECK(buffers >= 0 && max_size >= 1);
  SplitMix64 rng(seed);
  const int64_t steps = std::max<int64_t>(4, buffers / 4);
  Problem problem;
  problem.buffers.reserve(buffers);
  for (int64_t i = 0; i < buffers; ++i) {
    Buffer b;
    b.id = fmt::format("t{}", i);
    b.lower = rng.uniform(0, steps - 1);
    // Mostly short lives (activations), some medium, a few across the whole program.
    const int64_t kind = rng.uniform(0, 99);
    const int64_t longest = kind < 80 ? 4 : kind < 99 ? 32 : steps;
    b.upper = std::min(steps, b.lower + rng.uniform(1, longest));
    // Sizes spread over orders of magnitude, like tensors.
    const int64_t scale = int64_t{1} << rng.uniform(0, 63 - __builtin_clzll(static_cast<uint64_t>(max_size)));
    b.size = std::min(max_size, rng.uniform(1, scale));
    if (with_alignment) b.alignment = int64_t{1} << (2 * rng.uniform(0, 3));
    problem.buffers.push_back(std::move(b));
  }
  return problem;
}

}  // namespace memledger::allocate
