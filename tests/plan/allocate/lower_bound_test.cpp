#include "memledger/plan/allocate/lower_bound.h"

#include <gtest/gtest.h>

#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::buffer;

TEST(AllocateLowerBound, PeakOfLiveSizesWithExclusiveUpper) {
  // a lives in steps 0-1, b in 1-2, c in 2-3: step 1 holds a+b = 30, step 2 holds b+c = 50.
  const Problem p{{buffer("a", 0, 2, 10), buffer("b", 1, 3, 20), buffer("c", 2, 4, 30)}};
  const LowerBound bound = lower_bound(p);
  EXPECT_EQ(bound.peak_live_bytes, 50);
  EXPECT_EQ(bound.peak_step, 2);
  EXPECT_EQ(bound.bytes, 50);
}

TEST(AllocateLowerBound, BuffersThatOnlyTouchAreNotLiveTogether) {
  const Problem p{{buffer("a", 0, 1, 8), buffer("b", 1, 2, 8), buffer("c", 2, 3, 8)}};
  EXPECT_EQ(lower_bound(p).bytes, 8);
}

TEST(AllocateLowerBound, FixedOffsetRaisesTheBound) {
  Problem p{{buffer("a", 0, 4, 10), buffer("pinned", 0, 1, 5)}};
  p.buffers[1].fixed_offset = 100;
  const LowerBound bound = lower_bound(p);
  EXPECT_EQ(bound.peak_live_bytes, 15);
  EXPECT_EQ(bound.bytes, 105);
}

TEST(AllocateLowerBound, EmptyProblemAndZeroSizes) {
  EXPECT_EQ(lower_bound(Problem{}).bytes, 0);
  EXPECT_EQ(lower_bound(Problem{{buffer("empty", 0, 9, 0)}}).bytes, 0);
}

}  // namespace
}  // namespace memledger::allocate
