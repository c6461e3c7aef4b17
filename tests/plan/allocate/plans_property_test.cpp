// Property tests: on random problems every planner's plan validates, no arena is below the
// lower bound, and exact <= greedy <= naive.
#include <gtest/gtest.h>

#include "memledger/plan/allocate/exact.h"
#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/naive.h"
#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

void check_all_planners(const Problem& p) {
  const Solution naive = plan_naive(p);
  testing::expect_valid_plan(p, naive);
  for (const GreedyRun& run : greedy_portfolio(p.buffers.size())) {
    if (run.strategy == GreedyStrategy::kSweepBestFit && has_fixed_offsets(p)) continue;
    testing::expect_valid_plan(p, plan_greedy(p, run));
  }
  const Solution greedy = plan_greedy(p);
  testing::expect_valid_plan(p, greedy);
  const Solution exact = plan_exact(p, {.time_budget_seconds = 0.05}, &greedy).solution;
  testing::expect_valid_plan(p, exact);
  EXPECT_LE(exact.arena_bytes, greedy.arena_bytes);
  EXPECT_LE(greedy.arena_bytes, naive.arena_bytes);
}

TEST(AllocateProperty, RandomProblems) {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    SCOPED_TRACE(seed);
    check_all_planners(generate_random_problem(seed, static_cast<int64_t>(1 + seed % 60), 1 << (seed % 12),
                                               /*with_alignment=*/seed % 3 == 0));
  }
}

TEST(AllocateProperty, RandomProblemsWithFixedOffsets) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(seed);
    Problem p = generate_random_problem(seed, 40, 256, seed % 2 == 0);
    // Fix every fourth buffer where the no-reuse plan puts it: always feasible.
    const Solution naive = plan_naive(p);
    for (size_t i = 0; i < p.buffers.size(); i += 4) p.buffers[i].fixed_offset = naive.offsets[i];
    check_all_planners(p);
  }
}

TEST(AllocateProperty, HardInstancesStayValid) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    const HardInstance h = generate_hard_instance(seed, 150, seed % 2 ? CutStyle::kBrick : CutStyle::kGuillotine);
    check_all_planners(h.problem);
  }
}

}  // namespace
}  // namespace memledger::allocate
