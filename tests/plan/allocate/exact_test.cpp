#include "memledger/plan/allocate/exact.h"

#include <gtest/gtest.h>

#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/greedy.h"
#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::brute_force_optimum;
using testing::buffer;

TEST(AllocateExact, MatchesBruteForceOnTinyProblems) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Problem p = generate_random_problem(seed, 6, 4);
    const Solution s = plan_exact(p, {.time_budget_seconds = 2});
    SCOPED_TRACE(seed);
    testing::expect_valid_plan(p, s);
    EXPECT_EQ(s.arena_bytes, brute_force_optimum(p, s.arena_bytes + 1));
    EXPECT_TRUE(s.optimal);
  }
}

TEST(AllocateExact, SolvesAHardInstanceToItsKnownOptimum) {
  const HardInstance h = generate_hard_instance(11, 40, CutStyle::kBrick, 1000);
  ExactStats stats;
  const Solution s = plan_exact(h.problem, {.time_budget_seconds = 5}, nullptr, &stats);
  testing::expect_valid_plan(h.problem, s);
  EXPECT_EQ(s.arena_bytes, h.optimum);
  EXPECT_TRUE(s.optimal);
  EXPECT_LE(s.arena_bytes, stats.greedy_arena);
}

TEST(AllocateExact, DecisionProcedureFindsOrRefutes) {
  const HardInstance h = generate_hard_instance(5, 30, CutStyle::kGuillotine, 600);
  bool timed_out = true;
  const auto fits = find_placement_within(h.problem, h.optimum, 5, &timed_out);
  ASSERT_TRUE(fits.has_value());
  testing::expect_valid_plan(h.problem, *fits);
  EXPECT_FALSE(find_placement_within(h.problem, h.optimum - 1, 5, &timed_out).has_value());
  EXPECT_FALSE(timed_out);
}

TEST(AllocateExact, ZeroBudgetReturnsTheStartingPlan) {
  const HardInstance h = generate_hard_instance(2, 200, CutStyle::kBrick);
  const Solution greedy = plan_greedy(h.problem);
  const Solution s = plan_exact(h.problem, {.time_budget_seconds = 0}, &greedy);
  EXPECT_EQ(s.arena_bytes, greedy.arena_bytes);
  testing::expect_valid_plan(h.problem, s);
}

TEST(AllocateExact, FixedOffsetsFallBackToGreedy) {
  Problem p{{buffer("a", 0, 2, 4), buffer("b", 1, 3, 4)}};
  p.buffers[0].fixed_offset = 4;
  ExactStats stats;
  const Solution s = plan_exact(p, {}, nullptr, &stats);
  testing::expect_valid_plan(p, s);
  EXPECT_FALSE(stats.searched);
  EXPECT_EQ(s.offsets[0], 4);
  // A known limit: the greedy stacks above a fixed buffer, never into the hole below it.
  EXPECT_EQ(s.arena_bytes, 12);
}

}  // namespace
}  // namespace memledger::allocate
