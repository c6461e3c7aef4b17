#include "memledger/plan/allocate/greedy.h"

#include <gtest/gtest.h>

#include "memledger/plan/allocate/generator.h"
#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::buffer;

// TFLite Micro's planner test in spirit: a chain of activations where each op reads one
// buffer and writes the next, plus a long-lived skip connection.
Problem chain_with_skip() {
  return Problem{{buffer("in", 0, 2, 100), buffer("skip", 0, 5, 30), buffer("t1", 1, 3, 50), buffer("t2", 2, 4, 80),
                  buffer("t3", 3, 5, 20), buffer("out", 4, 6, 60)}};
}

TEST(AllocateGreedy, ChainWithSkipReachesTheLowerBound) {
  const Problem p = chain_with_skip();
  ASSERT_EQ(lower_bound(p).bytes, 180);  // step 1: in + skip + t1
  const Solution s = plan_greedy(p);
  testing::expect_valid_plan(p, s);
  EXPECT_EQ(s.arena_bytes, 180);
  EXPECT_TRUE(s.optimal);
}

TEST(AllocateGreedy, BottomUpBySizeIsTheCanonicalFill) {
  // a and b live together; c comes after a and fits in a's bytes.
  const Problem p{{buffer("a", 0, 2, 40), buffer("b", 0, 4, 24), buffer("c", 2, 4, 32)}};
  const Solution s = plan_greedy(p, {GreedyStrategy::kBottomUp, GreedyOrder::kSizeDesc});
  EXPECT_EQ(s.offsets, (std::vector<int64_t>{0, 40, 0}));
  EXPECT_EQ(s.arena_bytes, 64);
  EXPECT_EQ(s.algorithm, "greedy bottom-up/size");
  testing::expect_valid_plan(p, s);
}

TEST(AllocateGreedy, SweepFillsTheBestFittingHole) {
  // Step 0 stacks a, c, b, e by size. At step 1, a and b end, leaving holes of 64 bytes at
  // 0 and 16 bytes at 96 (between c and e); d (12 bytes) takes the smaller.
  const Problem p{{buffer("a", 0, 1, 64), buffer("c", 0, 3, 32), buffer("b", 0, 1, 16), buffer("e", 0, 3, 4),
                   buffer("d", 1, 3, 12)}};
  const Solution s = plan_greedy(p, {GreedyStrategy::kSweepBestFit, GreedyOrder::kSizeDesc});
  EXPECT_EQ(s.offsets, (std::vector<int64_t>{0, 64, 96, 112, 96}));
  testing::expect_valid_plan(p, s);
}

TEST(AllocateGreedy, EveryRunHonoursAlignment) {
  const Problem p = generate_random_problem(7, 300, 1000, /*with_alignment=*/true);
  for (const GreedyRun& run : greedy_portfolio(p.buffers.size())) {
    SCOPED_TRACE(to_string(run.strategy) + "/" + to_string(run.order));
    testing::expect_valid_plan(p, plan_greedy(p, run));
  }
}

TEST(AllocateGreedy, FixedOffsetsAreKept) {
  Problem p = chain_with_skip();
  p.buffers[1].fixed_offset = 500;
  const Solution s = plan_greedy(p);
  EXPECT_EQ(s.offsets[1], 500);
  testing::expect_valid_plan(p, s);
}

TEST(AllocateGreedy, PortfolioIsAtLeastAsGoodAsEachRun) {
  const HardInstance h = generate_hard_instance(3, 120, CutStyle::kBrick);
  const Solution best = plan_greedy(h.problem);
  testing::expect_valid_plan(h.problem, best);
  for (const GreedyRun& run : greedy_portfolio(h.problem.buffers.size())) {
    EXPECT_LE(best.arena_bytes, plan_greedy(h.problem, run).arena_bytes);
  }
}

// The sweep orders its events by counting where steps are dense and by a stable sort where they
// are far apart: the same offsets either way, in every order.
TEST(AllocateGreedy, SweepPlacesTheSameWhetherStepsAreDenseOrSpread) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed);
    Problem dense = generate_random_problem(seed, 400, 1000, /*with_alignment=*/seed % 2 == 0);
    dense.buffers[3].size = 0;
    Problem spread = dense;
    for (Buffer& b : spread.buffers) {
      b.lower = b.lower * 1000 - 5;
      b.upper = b.upper * 1000 - 5;
    }
    for (const GreedyOrder order :
         {GreedyOrder::kSizeDesc, GreedyOrder::kDurationDesc, GreedyOrder::kAreaDesc, GreedyOrder::kLowerAsc}) {
      const GreedyRun run{GreedyStrategy::kSweepBestFit, order};
      const Solution d = plan_greedy(dense, run);
      testing::expect_valid_plan(dense, d);
      EXPECT_EQ(plan_greedy(spread, run).offsets, d.offsets) << to_string(order);
    }
  }
}

}  // namespace
}  // namespace memledger::allocate
