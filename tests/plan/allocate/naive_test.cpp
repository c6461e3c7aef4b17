#include "memledger/plan/allocate/naive.h"

#include <gtest/gtest.h>

#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::buffer;

TEST(AllocateNaive, StacksEveryBufferWithAlignment) {
  const Problem p{{buffer("a", 0, 1, 10), buffer("b", 1, 2, 6, 8), buffer("c", 2, 3, 1)}};
  const Solution s = plan_naive(p);
  EXPECT_EQ(s.offsets, (std::vector<int64_t>{0, 16, 22}));
  EXPECT_EQ(s.arena_bytes, 23);
  EXPECT_FALSE(s.optimal);
  testing::expect_valid_plan(p, s);
}

TEST(AllocateNaive, KeepsFixedBuffersAndStartsAboveThem) {
  Problem p{{buffer("a", 0, 1, 10), buffer("pinned", 0, 2, 4)}};
  p.buffers[1].fixed_offset = 2;
  const Solution s = plan_naive(p);
  EXPECT_EQ(s.offsets, (std::vector<int64_t>{6, 2}));
  testing::expect_valid_plan(p, s);
}

}  // namespace
}  // namespace memledger::allocate
