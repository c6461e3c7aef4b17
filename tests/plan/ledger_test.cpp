// plan/ledger on the hand-planned graphs of tests/plan/hand_graphs.h (host profile: every
// float tensor 256 B, the Reshape's int64 shape 16 B logical and 64 B physical, resident).
#include "memledger/plan/ledger.h"

#include <gtest/gtest.h>

#include <set>

#include "hand_graphs.h"
#include "memledger/device/profile.h"

namespace memledger {
namespace {

using Bytes = std::map<BufferCategory, int64_t>;
constexpr auto kInput = BufferCategory::kInput;
constexpr auto kConstant = BufferCategory::kConstant;
constexpr auto kActivation = BufferCategory::kActivation;
constexpr auto kOutput = BufferCategory::kOutput;

Ledger ledger_of(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options = {}) {
  return make_ledger(graph, compute_liveness(graph, profile, options));
}

// Alias chain (b, c, y written over a): logical = 5 × 256 + 16 = 1296; physical counts the
// owners only: x 256 + shape 64 + a 256 = 576. Four buffers of activations and outputs
// hold 4 × 256 logical bytes, a alone owns them.
TEST(Ledger, TotalsCountAnAliasChainOnce) {
  const Ledger l = ledger_of(hand::alias_chain(), builtin_profile("host"));
  EXPECT_EQ(l.logical_bytes, 1296);
  EXPECT_EQ(l.physical_bytes, 576);
  EXPECT_EQ(l.external_bytes, 0);
  ASSERT_EQ(l.by_category.size(), 4u);
  const auto check = [&](BufferCategory c, int64_t logical, int64_t physical, int count) {
    const CategoryTotals& t = l.by_category.at(c);
    EXPECT_EQ(t.logical_bytes, logical) << to_string(c);
    EXPECT_EQ(t.physical_bytes, physical) << to_string(c);
    EXPECT_EQ(t.external_bytes, 0) << to_string(c);
    EXPECT_EQ(t.count, count) << to_string(c);
  };
  check(kInput, 256, 256, 1);
  check(kConstant, 16, 64, 1);
  check(kActivation, 768, 256, 3);  // a, b, c
  check(kOutput, 256, 0, 1);        // y is c's bytes
}

// Step 0: x, shape and a: 256 + 64 + 256 = 576, the peak. Steps 1–3: shape and a's
// storage (b, c, y in turn): 320, all of it activation storage by its owner a, even at
// step 3 where only the output y and c use it. a's storage (0–3) and the resident shape
// live at every step.
TEST(Ledger, TimelineByStepAndCategory) {
  const Ledger l = ledger_of(hand::alias_chain(), builtin_profile("host"));
  ASSERT_EQ(l.timeline.size(), 4u);
  const int64_t live[] = {576, 320, 320, 320};
  const char* nodes[] = {"relu", "sigmoid", "reshape", "exp"};
  for (int s = 0; s < 4; ++s) {
    const TimelineStep& t = l.timeline[static_cast<size_t>(s)];
    EXPECT_EQ(t.step, s);
    EXPECT_EQ(t.node_name, nodes[s]);
    EXPECT_EQ(t.live_bytes, live[s]) << "step " << s;
    int64_t sum = 0;
    for (const auto& [category, bytes] : t.live_by_category) sum += bytes;
    EXPECT_EQ(sum, t.live_bytes) << "step " << s;
  }
  EXPECT_EQ(l.timeline[0].live_by_category, (Bytes{{kInput, 256}, {kConstant, 64}, {kActivation, 256}}));
  EXPECT_EQ(l.timeline[3].live_by_category, (Bytes{{kConstant, 64}, {kActivation, 256}}));
  EXPECT_EQ(l.whole_program_by_category, (Bytes{{kConstant, 64}, {kActivation, 256}}));
  // Buffers by their own steps, largest first (ties in buffer order): x, a, shape start
  // at 0; c, y, shape are live at 3 and end there.
  const Liveness liveness = compute_liveness(hand::alias_chain(), builtin_profile("host"));
  EXPECT_EQ(l.timeline[0].starts, (std::vector<int>{0, 2, 1}));
  EXPECT_EQ(live_buffers_at(liveness, 0), (std::vector<int>{0, 2, 1}));
  EXPECT_EQ(live_buffers_at(liveness, 3), (std::vector<int>{4, 5, 1}));
  EXPECT_EQ(l.timeline[3].ends, (std::vector<int>{4, 5, 1}));
  EXPECT_EQ(l.timeline[3].live_count, 3);
  EXPECT_EQ(l.peak_live_bytes, 576);
  EXPECT_EQ(l.peak_step, 0);
  EXPECT_TRUE(l.inputs_in_arena);
  EXPECT_EQ(l.peak_live_with_inputs_bytes, 576);
  EXPECT_EQ(l.peak_live_without_inputs_bytes, 320);
}

// Donated, a takes x's bytes: x 256 + shape 64 = 320 at every step, and the input's
// storage is what lives for the whole program. Left without the graph inputs, the figure
// stays 320: x's bytes hold a, b, c and y, which count.
TEST(Ledger, ADonatedInputHoldsTheChain) {
  const Ledger l = ledger_of(hand::alias_chain(), builtin_profile("host"), {.donate_inputs = true});
  EXPECT_EQ(l.physical_bytes, 320);
  for (const TimelineStep& t : l.timeline) EXPECT_EQ(t.live_bytes, 320) << "step " << t.step;
  EXPECT_EQ(l.whole_program_by_category, (Bytes{{kInput, 256}, {kConstant, 64}}));
  EXPECT_EQ(l.peak_live_without_inputs_bytes, 320);
}

// x outside the arena: still 256 B in the totals and under external, out of the timeline:
// step 0 holds shape and a (320), the peak; with x counted it is 576 again.
TEST(Ledger, AnExternalInputIsCountedApart) {
  DeviceProfile p = builtin_profile("host");
  p.inputs = InputResidency::kExternal;
  const Ledger l = ledger_of(hand::alias_chain(), p);
  EXPECT_EQ(l.physical_bytes, 576);
  EXPECT_EQ(l.external_bytes, 256);
  EXPECT_EQ(l.by_category.at(kInput).external_bytes, 256);
  EXPECT_FALSE(l.inputs_in_arena);
  EXPECT_EQ(l.timeline[0].live_bytes, 320);
  EXPECT_EQ(l.timeline[0].starts, (std::vector<int>{2, 1}));
  EXPECT_EQ(l.timeline[0].live_count, 2);
  EXPECT_FALSE(l.timeline[0].live_by_category.contains(kInput));
  EXPECT_EQ(l.peak_live_bytes, 320);
  EXPECT_EQ(l.peak_live_with_inputs_bytes, 576);
  EXPECT_EQ(l.peak_live_without_inputs_bytes, 320);
}

// The bypass: a (0–2) and b (1–2) own 256 B each, y is b's. Step 0: x + a = 512; step 1
// and 2: a + b = 512. The first of equal steps is the peak. Without x, step 0 holds 256.
// a lives at all three steps: whole-program activation storage.
TEST(Ledger, ABypassKeepsBothBranchesLive) {
  const Ledger l = ledger_of(hand::bypass(), builtin_profile("host"));
  EXPECT_EQ(l.logical_bytes, 1024);
  EXPECT_EQ(l.physical_bytes, 768);
  for (const TimelineStep& t : l.timeline) EXPECT_EQ(t.live_bytes, 512) << "step " << t.step;
  EXPECT_EQ(l.timeline[2].live_by_category, (Bytes{{kActivation, 512}}));
  EXPECT_EQ(l.peak_step, 0);
  EXPECT_EQ(l.peak_live_without_inputs_bytes, 512);
  EXPECT_EQ(l.whole_program_by_category, (Bytes{{kActivation, 256}}));
}

// The timeline's changes give back each step's live set: the starts up to a step less the
// ends before it are exactly live_buffers_at, and live_count is their number.
TEST(Ledger, StartsAndEndsRebuildEveryLiveSet) {
  for (const Graph& g : {hand::alias_chain(), hand::bypass()}) {
    const Liveness live = compute_liveness(g, builtin_profile("host"));
    const Ledger l = make_ledger(g, live);
    std::set<int> running;
    for (const TimelineStep& t : l.timeline) {
      running.insert(t.starts.begin(), t.starts.end());
      const std::vector<int> at = live_buffers_at(live, t.step);
      EXPECT_EQ(running, std::set<int>(at.begin(), at.end())) << "step " << t.step;
      EXPECT_EQ(t.live_count, static_cast<int>(at.size())) << "step " << t.step;
      for (int b : t.ends) running.erase(b);
    }
    EXPECT_TRUE(running.empty());
  }
}

}  // namespace
}  // namespace memledger
