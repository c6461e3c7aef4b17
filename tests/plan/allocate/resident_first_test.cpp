// resident_first moves the whole-schedule buffers to the bottom without changing the arena
// or making any plan invalid.
#include "memledger/plan/allocate/resident_first.h"

#include <gtest/gtest.h>

#include <random>

#include "memledger/plan/allocate/greedy.h"
#include "plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::buffer;

TEST(ResidentFirst, ResidentsBecomeOneRegionAtTheBottom) {
  // a and b live only at step 1, w1 and w2 throughout; placed with w1 on top.
  Problem p;
  p.buffers = {buffer("a", 1, 2, 100), buffer("w1", 0, 3, 50), buffer("b", 1, 2, 30), buffer("w2", 0, 3, 20)};
  Solution s{.offsets = {0, 150, 100, 130}, .arena_bytes = 200, .algorithm = "by hand"};
  ASSERT_FALSE(find_violation(p, s));
  const Solution r = resident_first(p, s);
  EXPECT_EQ(r.offsets, (std::vector<int64_t>{70, 20, 170, 0}));  // w2, w1 (their order), then a, b
  EXPECT_EQ(r.arena_bytes, 200);
  EXPECT_FALSE(find_violation(p, r));
}

TEST(ResidentFirst, KeepsEveryRandomPlanValidAndNoLarger) {
  std::mt19937 rng(7);
  int moved = 0;
  for (int round = 0; round < 300; ++round) {
    Problem p;
    const int steps = 2 + static_cast<int>(rng() % 8), n = 2 + static_cast<int>(rng() % 30);
    const int64_t alignment = round % 3 == 0 ? 16 : 1;
    for (int i = 0; i < n; ++i) {
      const bool resident = rng() % 4 == 0;
      const int64_t lower = resident ? 0 : rng() % steps;
      const int64_t upper = resident ? steps : lower + 1 + rng() % (steps - lower);
      p.buffers.push_back(buffer("b" + std::to_string(i), lower, upper, alignment * (rng() % 20), alignment));
    }
    const Solution greedy = plan_greedy(p);
    const Solution r = resident_first(p, greedy);
    ASSERT_FALSE(find_violation(p, r)) << "round " << round;
    EXPECT_LE(r.arena_bytes, greedy.arena_bytes);
    moved += r.offsets != greedy.offsets;
    // Every buffer that lives throughout sits below every other buffer.
    int64_t resident_top = 0, other_bottom = INT64_MAX;
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      if (p.buffers[i].size == 0) continue;
      const bool whole = p.buffers[i].upper - p.buffers[i].lower == steps;
      if (whole) resident_top = std::max(resident_top, r.offsets[i] + p.buffers[i].size);
      if (!whole) other_bottom = std::min(other_bottom, r.offsets[i]);
    }
    EXPECT_LE(resident_top, other_bottom) << "round " << round;
  }
  EXPECT_GT(moved, 50);
}

}  // namespace
}  // namespace memledger::allocate
