#include "memledger/plan/allocate/validate.h"

#include <gtest/gtest.h>

#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::buffer;

Solution with(std::vector<int64_t> offsets, int64_t arena) {
  return Solution{std::move(offsets), arena, "hand", false};
}

TEST(AllocateValidate, AcceptsAPlanThatReusesBytesAcrossTime) {
  // a and c never live together, so they share [0, 10).
  const Problem p{{buffer("a", 0, 2, 10), buffer("b", 1, 3, 20), buffer("c", 2, 4, 10)}};
  EXPECT_EQ(find_violation(p, with({0, 10, 0}, 30)), std::nullopt);
}

TEST(AllocateValidate, NamesBothBuffersTheStepAndTheSharedBytes) {
  const Problem p{{buffer("a", 0, 2, 10), buffer("b", 1, 3, 20)}};
  const auto violation = find_violation(p, with({0, 5}, 25));
  ASSERT_TRUE(violation.has_value());
  EXPECT_EQ(*violation, "buffers 'a' [0, 10) and 'b' [5, 25) are both live at step 1 and share bytes [5, 10)");
}

TEST(AllocateValidate, FindsAnOverlapHiddenBehindANeighbour) {
  // c starts between a and b in address, overlapping b only.
  const Problem p{{buffer("a", 0, 5, 4), buffer("b", 0, 5, 4), buffer("c", 3, 5, 4)}};
  const auto violation = find_violation(p, with({0, 8, 6}, 12));
  ASSERT_TRUE(violation.has_value());
  EXPECT_NE(violation->find("'b' [8, 12) and 'c' [6, 10)"), std::string::npos) << *violation;
}

TEST(AllocateValidate, AlignmentFixedOffsetsAndArena) {
  Problem p{{buffer("a", 0, 1, 4, 8), buffer("b", 0, 1, 4)}};
  EXPECT_EQ(*find_violation(p, with({4, 12}, 16)), "buffer 'a' at offset 4 is not aligned to 8");
  EXPECT_EQ(*find_violation(p, with({0, 4}, 7)), "buffer 'b' [4, 8) ends beyond the arena of 7 bytes");
  p.buffers[1].fixed_offset = 8;
  EXPECT_EQ(*find_violation(p, with({0, 4}, 8)), "buffer 'b' is fixed at offset 8 but placed at 4");
  EXPECT_EQ(find_violation(p, with({0, 8}, 12)), std::nullopt);
  EXPECT_EQ(*find_violation(p, with({0}, 8)), "the solution has 1 offsets for 2 buffers");
}

TEST(AllocateValidate, ZeroSizeBuffersShareAnyOffset) {
  const Problem p{{buffer("a", 0, 3, 16), buffer("empty", 0, 3, 0)}};
  EXPECT_EQ(find_violation(p, with({0, 8}, 16)), std::nullopt);
}

}  // namespace
}  // namespace memledger::allocate
