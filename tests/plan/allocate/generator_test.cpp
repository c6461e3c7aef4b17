#include "memledger/plan/allocate/generator.h"

#include <gtest/gtest.h>

#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

class AllocateGenerator : public ::testing::TestWithParam<CutStyle> {};

TEST_P(AllocateGenerator, TheCutIsAnOptimalPlanAndTheBoundIsTight) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const int64_t buffers = 150 + static_cast<int64_t>(seed * 15);
    const HardInstance h = generate_hard_instance(seed, buffers, GetParam());
    SCOPED_TRACE(seed);
    EXPECT_EQ(static_cast<int64_t>(h.problem.buffers.size()), buffers);
    EXPECT_EQ(lower_bound(h.problem).bytes, h.optimum);
    const Solution witness{h.witness, h.optimum, "witness", true};
    testing::expect_valid_plan(h.problem, witness);
  }
}

TEST_P(AllocateGenerator, TheSeedNamesTheInstance) {
  const HardInstance a = generate_hard_instance(9, 200, GetParam());
  const HardInstance b = generate_hard_instance(9, 200, GetParam());
  const HardInstance c = generate_hard_instance(10, 200, GetParam());
  EXPECT_EQ(a.witness, b.witness);
  EXPECT_NE(a.witness, c.witness);
}

INSTANTIATE_TEST_SUITE_P(Styles, AllocateGenerator, ::testing::Values(CutStyle::kGuillotine, CutStyle::kBrick),
                         [](const auto& param_info) {
                           return param_info.param == CutStyle::kGuillotine ? "Guillotine" : "Brick";
                         });

TEST_P(AllocateGenerator, TheRemovedPiecesAreTheHolesOfTheWitness) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed);
    const int64_t buffers = 150 + static_cast<int64_t>(seed * 30);
    const int64_t removed = 1 + static_cast<int64_t>(seed) * buffers / 100;
    const SlackInstance s = generate_slack_instance(seed, buffers, removed, GetParam());
    ASSERT_EQ(static_cast<int64_t>(s.problem.buffers.size()), buffers);
    ASSERT_EQ(static_cast<int64_t>(s.removed.size()), removed);
    // The witness with the removed pieces at their offsets fills every step exactly.
    Problem whole = s.problem;
    std::vector<int64_t> offsets = s.witness;
    for (const Buffer& hole : s.removed) {
      Buffer b = hole;
      offsets.push_back(*b.fixed_offset);
      b.fixed_offset.reset();
      whole.buffers.push_back(b);
    }
    EXPECT_EQ(lower_bound(whole).bytes, s.capacity);
    testing::expect_valid_plan(whole, Solution{offsets, s.capacity, "witness", true});
    EXPECT_LE(s.lower_bound, s.capacity);
  }
}

TEST(AllocateRandomProblem, IsWellFormed) {
  const Problem p = generate_random_problem(1, 1000, 4096, true);
  ASSERT_EQ(p.buffers.size(), 1000u);
  EXPECT_NO_THROW(check_problem(p));
}

// The benches' sizing: 150 buffers at the first instance, 450 at the last, the share removed
// going 1 %, ..., 10 % in turn, at least one piece; a single instance takes the smallest size.
TEST(AllocateBenchSizes, SpanTheBenchesRange) {
  const BenchSizes first = bench_sizes(0, 20);
  EXPECT_EQ(first.buffers, 150);
  EXPECT_EQ(first.percent, 1);
  EXPECT_EQ(first.removed, 2);  // 1.5 rounded
  const BenchSizes last = bench_sizes(19, 20);
  EXPECT_EQ(last.buffers, 450);
  EXPECT_EQ(last.percent, 10);
  EXPECT_EQ(last.removed, 45);
  EXPECT_EQ(bench_sizes(10, 20).percent, 1);
  EXPECT_EQ(bench_sizes(0, 1).buffers, 150);
  EXPECT_EQ(bench_sizes(0, 1).removed, 2);
}

}  // namespace
}  // namespace memledger::allocate
