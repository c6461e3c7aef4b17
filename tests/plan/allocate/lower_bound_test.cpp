#include "memledger/plan/allocate/lower_bound.h"

#include <gtest/gtest.h>

#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/views.h"
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

// Dense steps take a difference array, steps far apart the sorted ends: both give the same peak
// at the same step (the problem spread out in time takes the sorted path, the reversed one steps
// below zero).
TEST(AllocateLowerBound, DenseAndSpreadStepsAgree) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    Problem dense = generate_random_problem(seed, 300);
    for (size_t i = 0; i < dense.buffers.size(); i += 10) dense.buffers[i].size = 0;  // skipped by both
    Problem spread = dense;
    for (Buffer& b : spread.buffers) {
      b.lower = b.lower * 1000 + 7;
      b.upper = b.upper * 1000 + 7;
    }
    const LowerBound d = lower_bound(dense), s = lower_bound(spread), r = lower_bound(reversed_in_time(dense));
    EXPECT_GT(d.peak_live_bytes, 0);
    EXPECT_EQ(s.peak_live_bytes, d.peak_live_bytes);
    EXPECT_EQ(s.peak_step, d.peak_step * 1000 + 7);
    EXPECT_EQ(r.peak_live_bytes, d.peak_live_bytes);
    int64_t at_peak = 0;  // what lives at the step the bound names
    for (const Buffer& b : dense.buffers) at_peak += b.lower <= d.peak_step && d.peak_step < b.upper ? b.size : 0;
    EXPECT_EQ(at_peak, d.peak_live_bytes);
  }
}

}  // namespace
}  // namespace memledger::allocate
