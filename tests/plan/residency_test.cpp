// Constants and graph inputs outside the arena (profile keys `constants = "external"`,
// `inputs = "external"`): they stay in the ledger with their bytes, take no arena bytes,
// and peak-live is reported with and without the graph inputs. Figures are the teaching
// example's (DESIGN.md §5), where every tensor holds 8960 B under the teaching profile.
#include <gtest/gtest.h>

#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/teaching/variants.h"

namespace memledger {
namespace {

DeviceProfile teaching_with(ConstantResidency constants, InputResidency inputs) {
  DeviceProfile p = builtin_profile("teaching");
  p.constants = constants;
  p.inputs = inputs;
  return p;
}

const LiveBuffer& buffer_named(const Liveness& live, const std::string& name) {
  for (const auto& b : live.buffers)
    if (b.name == name) return b;
  throw std::runtime_error("no buffer " + name);
}

// Variant A: x, the expanded scale and bias (8960 B each), a workspace and y of 8960 B
// each are all live at its single step: 44800 B in the arena.
TEST(Residency, ExternalConstantsTakeNoArenaBytesButStayInTheLedger) {
  const teaching::Variant a = teaching::affine_variants()[0];
  const MemoryPlan in_arena = plan_memory(a.graph, builtin_profile("teaching"), a.options);
  EXPECT_EQ(in_arena.ledger.peak_live_bytes, 44800);
  EXPECT_EQ(in_arena.ledger.external_bytes, 0);

  const MemoryPlan plan =
      plan_memory(a.graph, teaching_with(ConstantResidency::kExternal, InputResidency::kArena), a.options);
  EXPECT_EQ(plan.ledger.peak_live_bytes, 44800 - 2 * 8960);  // x + workspace + y
  EXPECT_EQ(plan.arena_bytes, plan.ledger.peak_live_bytes);
  const CategoryTotals& constants = plan.ledger.by_category.at(BufferCategory::kConstant);
  EXPECT_EQ(constants.count, 2);
  EXPECT_EQ(constants.physical_bytes, 2 * 8960);
  EXPECT_EQ(constants.external_bytes, 2 * 8960);
  EXPECT_EQ(plan.ledger.external_bytes, 2 * 8960);
  EXPECT_EQ(plan.ledger.physical_bytes, in_arena.ledger.physical_bytes);  // same buffers, same bytes
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    EXPECT_EQ(b.external, b.category == BufferCategory::kConstant) << b.name;
    if (b.external) {
      EXPECT_EQ(plan.offsets[i], -1) << b.name;
    }
  }
  EXPECT_EQ(plan.problem.buffers.size(), 3u);  // only the arena's buffers are placed
  for (int b : live_buffers_at(plan.liveness, 0)) EXPECT_FALSE(plan.liveness.buffers[static_cast<size_t>(b)].external);
  EXPECT_TRUE(plan.ledger.inputs_in_arena);
  EXPECT_EQ(plan.ledger.peak_live_with_inputs_bytes, 26880);
  EXPECT_EQ(plan.ledger.peak_live_without_inputs_bytes, 17920);
}

TEST(Residency, ExternalInputsArePeakLiveWithoutInputs) {
  const teaching::Variant a = teaching::affine_variants()[0];
  const MemoryPlan plan =
      plan_memory(a.graph, teaching_with(ConstantResidency::kExternal, InputResidency::kExternal), a.options);
  EXPECT_FALSE(plan.ledger.inputs_in_arena);
  EXPECT_EQ(plan.ledger.peak_live_bytes, 17920);  // workspace + y
  EXPECT_EQ(plan.ledger.peak_live_without_inputs_bytes, 17920);
  EXPECT_EQ(plan.ledger.peak_live_with_inputs_bytes, 26880);
  EXPECT_EQ(plan.ledger.by_category.at(BufferCategory::kInput).external_bytes, 8960);
  EXPECT_TRUE(buffer_named(plan.liveness, "x").external);
}

// Variant C writes y over the donated x; an input outside the arena cannot be written
// over, so y then owns its own bytes.
TEST(Residency, NothingIsWrittenInPlaceOverAnExternalInput) {
  const teaching::Variant c = teaching::affine_variants()[2];
  ASSERT_TRUE(c.options.donate_inputs);
  const Liveness in_arena = compute_liveness(c.graph, builtin_profile("teaching"), c.options);
  EXPECT_TRUE(buffer_named(in_arena, "y").alias_of.has_value());
  const Liveness external =
      compute_liveness(c.graph, teaching_with(ConstantResidency::kJustInTime, InputResidency::kExternal), c.options);
  EXPECT_FALSE(buffer_named(external, "y").alias_of.has_value());
}

// The arena runner gives external buffers storage of their own: every variant runs
// bit-identically with no guard violation under the MCU profile.
TEST(Residency, ArenaRunWithExternalConstantsAndInputsIsBitIdentical) {
  for (const teaching::Variant& v : teaching::affine_variants()) {
    SCOPED_TRACE(std::string(1, v.letter));
    const DeviceProfile mcu = with_model_dtypes(builtin_profile("mcu"));
    const MemoryPlan plan = plan_memory(v.graph, mcu, v.options);
    const ArenaRunReport r = run_in_arena(v.graph, plan, random_inputs(v.graph, 3));
    std::string why = r.failure;
    for (const auto& x : r.violations) why += "\n" + x.message;
    for (const auto& d : r.differing_outputs) why += "\n" + d;
    EXPECT_TRUE(r.clean()) << why;
  }
}

}  // namespace
}  // namespace memledger
