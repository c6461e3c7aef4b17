// plan/liveness on graphs planned by hand (tests/plan/hand_graphs.h): each buffer's steps,
// its bytes, and which outputs take their input's storage (in place, alias chains) and
// which may not (a bypass branch, a graph input not donated, in-place turned off).
#include "memledger/plan/liveness.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "hand_graphs.h"
#include "memledger/device/profile.h"

namespace memledger {
namespace {

const DeviceProfile& host() {
  static const DeviceProfile p = builtin_profile("host");
  return p;
}

int index_of(const Liveness& live, const std::string& name) {
  for (size_t i = 0; i < live.buffers.size(); ++i)
    if (live.buffers[i].name == name) return static_cast<int>(i);
  throw std::runtime_error("no buffer " + name);
}

const LiveBuffer& named(const Liveness& live, const std::string& name) {
  return live.buffers[static_cast<size_t>(index_of(live, name))];
}

// Inputs first, then constants by first use, then each step's outputs: x, shape, a, b, c, y.
// x: read by Relu at step 0 only → 0–0. shape: resident under host → 0–3, 16 B of int64
// rounded up to 64. a: made at 0, read at 1 → 0–1; b 1–2; c 2–3; y, a graph output, 3–3.
TEST(Liveness, StepsAndBytesOfEveryBuffer) {
  const Liveness live = compute_liveness(hand::alias_chain(), host());
  ASSERT_EQ(live.steps(), 4);
  ASSERT_EQ(live.buffers.size(), 6u);
  const struct {
    const char* name;
    BufferCategory category;
    int64_t logical, physical;
    int first, last;
  } expected[] = {
      {"x", BufferCategory::kInput, 256, 256, 0, 0},      {"shape", BufferCategory::kConstant, 16, 64, 0, 3},
      {"a", BufferCategory::kActivation, 256, 256, 0, 1}, {"b", BufferCategory::kActivation, 256, 256, 1, 2},
      {"c", BufferCategory::kActivation, 256, 256, 2, 3}, {"y", BufferCategory::kOutput, 256, 256, 3, 3}};
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    EXPECT_EQ(b.name, expected[i].name);
    EXPECT_EQ(b.category, expected[i].category) << b.name;
    EXPECT_EQ(b.logical_bytes, expected[i].logical) << b.name;
    EXPECT_EQ(b.physical_bytes, expected[i].physical) << b.name;
    EXPECT_EQ(b.first_step, expected[i].first) << b.name;
    EXPECT_EQ(b.last_step, expected[i].last) << b.name;
    EXPECT_FALSE(b.external) << b.name;
  }
}

// b over a (Sigmoid, in place), c over b (Reshape, an alias), y over c (Exp): one chain
// whose root is a, which then holds its storage from step 0 to step 3.
TEST(Liveness, AnAliasChainSharesItsRootsStorage) {
  const Liveness live = compute_liveness(hand::alias_chain(), host());
  const int a = index_of(live, "a"), b = index_of(live, "b"), c = index_of(live, "c"), y = index_of(live, "y");
  EXPECT_FALSE(named(live, "a").alias_of.has_value());  // x is a graph input, not donated
  EXPECT_EQ(named(live, "b").alias_of, a);
  EXPECT_EQ(named(live, "c").alias_of, b);
  EXPECT_EQ(named(live, "y").alias_of, c);
  for (int i : {a, b, c, y}) EXPECT_EQ(live.storage_of(i), a);
  const auto intervals = live.storage_intervals();
  for (int i : {a, b, c, y}) EXPECT_EQ(intervals[static_cast<size_t>(i)], (std::pair{0, 3}));
  EXPECT_EQ(intervals[static_cast<size_t>(index_of(live, "x"))], (std::pair{0, 0}));
}

// Donated inputs: a may take x's bytes too, so the whole chain lives in x's 256 B.
TEST(Liveness, ADonatedInputStartsTheChain) {
  const Liveness live = compute_liveness(hand::alias_chain(), host(), {.donate_inputs = true});
  const int x = index_of(live, "x");
  EXPECT_EQ(named(live, "a").alias_of, x);
  EXPECT_EQ(live.storage_of(index_of(live, "y")), x);
  EXPECT_EQ(live.storage_intervals()[static_cast<size_t>(x)], (std::pair{0, 3}));
}

// The bypass: a is read again at step 2, so b (step 1) owns its bytes; y at step 2 takes
// b's, its input 0, both inputs being read for the last time.
TEST(Liveness, ABypassBranchRefusesInPlace) {
  const Liveness live = compute_liveness(hand::bypass(), host());
  ASSERT_EQ(live.steps(), 3);
  EXPECT_EQ(named(live, "a").last_step, 2);
  EXPECT_FALSE(named(live, "a").alias_of.has_value());
  EXPECT_FALSE(named(live, "b").alias_of.has_value());
  EXPECT_EQ(named(live, "y").alias_of, index_of(live, "b"));
}

TEST(Liveness, InPlaceOffGivesEveryBufferItsOwnBytes) {
  const Liveness live = compute_liveness(hand::alias_chain(), host(), {.in_place = false});
  for (const LiveBuffer& b : live.buffers) EXPECT_FALSE(b.alias_of.has_value()) << b.name;
}

// Under inputs = "external", x keeps its entry and steps but is outside the arena, and
// nothing is written over it even when inputs are donated.
TEST(Liveness, AnExternalInputIsNeverWrittenOver) {
  DeviceProfile p = host();
  p.inputs = InputResidency::kExternal;
  const Liveness live = compute_liveness(hand::alias_chain(), p, {.donate_inputs = true});
  EXPECT_TRUE(named(live, "x").external);
  EXPECT_EQ(named(live, "x").physical_bytes, 256);
  EXPECT_FALSE(named(live, "a").alias_of.has_value());
}

}  // namespace
}  // namespace memledger
