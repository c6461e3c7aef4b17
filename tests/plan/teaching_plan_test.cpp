// The planner reproduces DESIGN.md §5's peak-live figures for variants A–D exactly, and
// every plan passes the validator.
#include <gtest/gtest.h>

#include "memledger/device/profile.h"
#include "memledger/plan/allocate/validate.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/teaching/variants.h"

namespace memledger {
namespace {

TEST(TeachingPlan, VariantPeaksOfTheDesign) {
  const DeviceProfile teaching = builtin_profile("teaching");
  const std::map<char, int64_t> expected{{'A', 44800}, {'B', 17952}, {'C', 8992}, {'D', 17952}};
  const std::map<char, bool> fits{{'A', false}, {'B', true}, {'C', true}, {'D', true}};
  for (const auto& v : teaching::affine_variants()) {
    SCOPED_TRACE(std::string(1, v.letter));
    const MemoryPlan plan = plan_memory(v.graph, teaching, v.options);
    EXPECT_EQ(plan.ledger.peak_live_bytes, expected.at(v.letter));
    EXPECT_EQ(plan.arena_bytes, plan.ledger.peak_live_bytes);  // placement reaches the lower bound
    EXPECT_EQ(plan.fits, fits.at(v.letter));
    EXPECT_FALSE(allocate::find_violation(plan.problem, {.offsets =
                                                             [&] {
                                                               std::vector<int64_t> o;
                                                               for (int b : plan.problem_buffer)
                                                                 o.push_back(plan.offsets[static_cast<size_t>(b)]);
                                                               return o;
                                                             }(),
                                                         .arena_bytes = plan.arena_bytes})
                     .has_value());
  }
}

TEST(TeachingPlan, InPlaceOnlyWhereLegal) {
  const DeviceProfile teaching = builtin_profile("teaching");
  const auto variants = teaching::affine_variants();
  auto alias_of_y = [&](const teaching::Variant& v) {
    const Liveness live = compute_liveness(v.graph, teaching, v.options);
    for (const auto& b : live.buffers)
      if (b.name == "y") return b.alias_of.has_value();
    ADD_FAILURE() << "no buffer y";
    return false;
  };
  EXPECT_FALSE(alias_of_y(variants[0]));  // historical kernel: no in-place
  EXPECT_FALSE(alias_of_y(variants[1]));  // x is the caller's: never overwritten
  EXPECT_TRUE(alias_of_y(variants[2]));
  EXPECT_FALSE(alias_of_y(variants[3]));  // the bypass still reads x
}

TEST(TeachingPlan, WorkspaceIsABufferOfItsStep) {
  const auto variants = teaching::affine_variants();
  const Liveness live = compute_liveness(variants[0].graph, builtin_profile("teaching"));
  int workspaces = 0;
  for (const auto& b : live.buffers) {
    if (b.category != BufferCategory::kWorkspace) continue;
    ++workspaces;
    EXPECT_EQ(b.physical_bytes, 8960);
    EXPECT_EQ(b.first_step, 0);
    EXPECT_EQ(b.last_step, 0);
  }
  EXPECT_EQ(workspaces, 1);
}

TEST(TeachingPlan, ExpandedMulAddModel) {
  const MemoryPlan plan = plan_memory(teaching::expanded_mul_add_model(), builtin_profile("teaching"));
  // Step 0 (Mul): x, the expanded scale and the product; step 1 (Add): the product (the
  // sum written over it) and the expanded bias. x is the caller's and stays untouched.
  ASSERT_EQ(plan.ledger.timeline.size(), 2u);
  EXPECT_EQ(plan.ledger.timeline[0].live_bytes, 3 * 8960);
  EXPECT_EQ(plan.ledger.timeline[1].live_bytes, 2 * 8960);
  EXPECT_EQ(plan.ledger.peak_live_bytes, 26880);
  EXPECT_TRUE(plan.fits);  // 26880 ≤ 32768: the expanded constants alone don't break it
}

TEST(Ledger, CategoriesAddUp) {
  const auto variants = teaching::affine_variants();
  const MemoryPlan plan = plan_memory(variants[0].graph, builtin_profile("teaching"));
  int64_t logical = 0, physical = 0;
  for (const auto& [category, totals] : plan.ledger.by_category) {
    logical += totals.logical_bytes;
    physical += totals.physical_bytes;
  }
  EXPECT_EQ(logical, plan.ledger.logical_bytes);
  EXPECT_EQ(physical, plan.ledger.physical_bytes);
  EXPECT_EQ(plan.ledger.by_category.at(BufferCategory::kConstant).physical_bytes, 2 * 8960);
  EXPECT_EQ(plan.ledger.by_category.at(BufferCategory::kConstant).logical_bytes, 2 * 6720);
  EXPECT_EQ(plan.ledger.by_category.at(BufferCategory::kWorkspace).count, 1);
}

}  // namespace
}  // namespace memledger
