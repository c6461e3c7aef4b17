#include "memledger/plan/allocate/exact.h"

#include <gtest/gtest.h>

#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::brute_force_optimum;
using testing::buffer;

TEST(AllocateExact, MatchesBruteForceOnTinyProblems) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Problem p = generate_random_problem(seed, 6, 4);
    const ExactResult r = plan_exact(p, {.time_budget_seconds = 2});
    SCOPED_TRACE(seed);
    testing::expect_valid_plan(p, r.solution);
    EXPECT_EQ(r.solution.arena_bytes, brute_force_optimum(p, r.solution.arena_bytes + 1));
    EXPECT_TRUE(r.solution.optimal);
    EXPECT_EQ(r.stats.proven_bound, r.solution.arena_bytes);
  }
}

TEST(AllocateExact, SolvesAHardInstanceToItsKnownOptimum) {
  const HardInstance h = generate_hard_instance(11, 40, CutStyle::kBrick, 1000);
  const ExactResult r = plan_exact(h.problem, {.time_budget_seconds = 5});
  testing::expect_valid_plan(h.problem, r.solution);
  EXPECT_EQ(r.solution.arena_bytes, h.optimum);
  EXPECT_TRUE(r.solution.optimal);
  EXPECT_LE(r.solution.arena_bytes, r.stats.greedy_arena);
}

TEST(AllocateExact, DecisionProcedureFindsOrRefutes) {
  const HardInstance h = generate_hard_instance(5, 30, CutStyle::kGuillotine, 600);
  const PlacementDecision fits = decide_within(h.problem, h.optimum, 5);
  ASSERT_EQ(fits.outcome, DecisionResult::Outcome::kFound);
  testing::expect_valid_plan(h.problem, *fits.solution);
  const PlacementDecision below = decide_within(h.problem, h.optimum - 1, 5);
  EXPECT_EQ(below.outcome, DecisionResult::Outcome::kInfeasible);
  EXPECT_FALSE(below.solution.has_value());
}

// With a capacity, the first question is whether the plan fits it: the slack instance's
// known capacity is reached, and the statistics say how (nodes, best arena over time).
TEST(AllocateExact, ACapacityIsDecidedFirst) {
  const SlackInstance h = generate_slack_instance(3, 200, 10, CutStyle::kGuillotine, 100'000);
  const Solution greedy = plan_greedy(h.problem);
  ASSERT_GT(greedy.arena_bytes, h.capacity);
  const ExactResult r = plan_exact(h.problem, {.time_budget_seconds = 10, .capacity = h.capacity}, &greedy);
  testing::expect_valid_plan(h.problem, r.solution);
  EXPECT_LE(r.solution.arena_bytes, h.capacity);
  EXPECT_GE(r.stats.probes, 1);
  EXPECT_GE(r.stats.nodes, 1);
  ASSERT_GE(r.stats.best_over_time.size(), 2u);
  EXPECT_EQ(r.stats.best_over_time.front().arena_bytes, greedy.arena_bytes);
  EXPECT_EQ(r.stats.best_over_time.back().arena_bytes, r.solution.arena_bytes);
  for (size_t i = 1; i < r.stats.best_over_time.size(); ++i) {
    EXPECT_LT(r.stats.best_over_time[i].arena_bytes, r.stats.best_over_time[i - 1].arena_bytes);
    EXPECT_GE(r.stats.best_over_time[i].seconds, r.stats.best_over_time[i - 1].seconds);
  }
}

// An infeasible capacity (the lower bound, where the optimum is above it) is refuted when
// the search completes: proven_bound passes it, and the arena is still minimised.
TEST(AllocateExact, AnInfeasibleCapacityIsProvenSo) {
  int refuted = 0;
  for (uint32_t seed = 1; seed <= 80; ++seed) {
    int64_t peak = 0;
    const Problem p = testing::random_chain_problem(seed, 8, peak);
    if (decide_within(p, peak, 60).outcome != DecisionResult::Outcome::kInfeasible) continue;
    SCOPED_TRACE(seed);
    const ExactResult r = plan_exact(p, {.time_budget_seconds = 60, .capacity = peak});
    testing::expect_valid_plan(p, r.solution);
    EXPECT_GT(r.stats.proven_bound, peak);
    EXPECT_GT(r.solution.arena_bytes, peak);
    EXPECT_TRUE(r.solution.optimal);
    EXPECT_EQ(r.stats.proven_bound, r.solution.arena_bytes);
    ++refuted;
  }
  EXPECT_GE(refuted, 4);
}

TEST(AllocateExact, ZeroBudgetReturnsTheStartingPlan) {
  const HardInstance h = generate_hard_instance(2, 200, CutStyle::kBrick);
  const Solution greedy = plan_greedy(h.problem);
  const ExactResult r = plan_exact(h.problem, {.time_budget_seconds = 0}, &greedy);
  EXPECT_EQ(r.solution.arena_bytes, greedy.arena_bytes);
  testing::expect_valid_plan(h.problem, r.solution);
}

TEST(AllocateExact, FixedOffsetsFallBackToGreedy) {
  Problem p{{buffer("a", 0, 2, 4), buffer("b", 1, 3, 4)}};
  p.buffers[0].fixed_offset = 4;
  const ExactResult r = plan_exact(p);
  testing::expect_valid_plan(p, r.solution);
  EXPECT_FALSE(r.stats.searched);
  EXPECT_EQ(r.solution.offsets[0], 4);
  // A known limit: the greedy stacks above a fixed buffer, never into the hole below it.
  EXPECT_EQ(r.solution.arena_bytes, 12);
}

}  // namespace
}  // namespace memledger::allocate
