// plan_memory_banked on real models: a one-bank map plans exactly as one arena does; a map
// with a small fast bank keeps every buffer in a bank that may hold it, each bank valid.
#include "memledger/plan/banked_plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "memledger/core/error.h"
#include "memledger/onnx/import.h"
#include "memledger/plan/allocate/validate.h"

namespace memledger {
namespace {

Graph model(const char* name) { return import_onnx_file(std::string(MEMLEDGER_SOURCE_DIR "/tests/data/onnx/") + name); }

DeviceProfile profile(const std::string& banks) {
  return parse_device_profile(
      "name = \"t\"\nalignment_bytes = 16\nlayout = \"NHWC\"\nstorage = \"int8\"\nconstants = \"external\"\n" + banks,
      "t.toml");
}

TEST(BankedPlan, OneBankIsTodaysPlan) {
  for (const char* name : {"conv_bn_relu.onnx", "randwire_ws_n10_s3.onnx", "affine_distinct.onnx"}) {
    SCOPED_TRACE(name);
    const Graph g = model(name);
    DeviceProfile one_arena = profile("capacity_bytes = 65536\n");
    const DeviceProfile one_bank = profile("[[banks]]\nname = \"ram\"\ncapacity_bytes = 65536\n");
    const MemoryPlan today = plan_memory(g, one_arena, {}, {.algorithm = allocate::Algorithm::kGreedy});
    const MemoryPlan banked = plan_memory_banked(g, one_bank, {}, {.algorithm = allocate::Algorithm::kGreedy});
    ASSERT_TRUE(banked.banked);
    EXPECT_EQ(banked.offsets, today.offsets);
    EXPECT_EQ(banked.arena_bytes, today.arena_bytes);
    EXPECT_EQ(banked.fits, today.fits);
    EXPECT_EQ(banked.lower_bound_bytes, today.lower_bound_bytes);
    for (size_t i = 0; i < banked.liveness.buffers.size(); ++i)
      EXPECT_EQ(banked.banked->bank_of[i], banked.liveness.buffers[i].external ? -1 : 0);
  }
}

TEST(BankedPlan, SpillsToTheSlowBankWhenTheFastOneIsFull) {
  const Graph g = model("randwire_ws_n10_s3.onnx");
  const MemoryPlan one = plan_memory(g, profile("capacity_bytes = 0\n"));
  const int64_t fast = one.ledger.peak_live_bytes / 2;
  const DeviceProfile p = profile(fmt::format(
      "[[banks]]\nname = \"tcm\"\ncapacity_bytes = {}\nholds = [\"activations\", \"workspaces\"]\n"
      "[[banks]]\nname = \"sram\"\ncapacity_bytes = 1048576\naccess_cost = 4\nholds = [\"activations\", "
      "\"workspaces\", \"inputs\"]\n[[banks]]\nname = \"flash\"\ncapacity_bytes = 1048576\naccess_cost = 6\n"
      "read_only = true\n",
      fast));
  const MemoryPlan plan = plan_memory_banked(g, p);
  ASSERT_TRUE(plan.banked);
  const auto& s = plan.banked->solution;
  EXPECT_TRUE(plan.fits);
  EXPECT_GT(s.banks[0].problem.buffers.size(), 0u);
  EXPECT_GT(s.banks[1].problem.buffers.size(), 0u);
  EXPECT_LE(s.banks[0].solution.arena_bytes, fast);
  EXPECT_LE(s.lower_bound_cost, s.traffic_cost);
  for (const auto& use : s.banks) EXPECT_FALSE(allocate::find_violation(use.problem, use.solution));
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    const int bank = plan.banked->bank_of[i];
    if (b.category == BufferCategory::kConstant) {
      EXPECT_EQ(bank, 2) << b.name;  // read in place from flash
    }
    if (b.category == BufferCategory::kInput) {
      EXPECT_EQ(bank, 1) << b.name;  // only sram holds inputs
    }
  }
}

TEST(BankedPlan, ABufferNoBankHoldsIsAnError) {
  const Graph g = model("conv_bn_relu.onnx");
  const DeviceProfile p = profile("[[banks]]\nname = \"tcm\"\ncapacity_bytes = 65536\nholds = [\"activations\"]\n");
  try {
    plan_memory_banked(g, p);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("(input) may live in no bank of device 't': no writable bank holds inputs"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace memledger
