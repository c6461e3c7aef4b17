// fit on devices with memory banks (issue 37, item 3): every candidate planned across the
// banks, a patch's extra MACs and a spill's slow-bank traffic weighed in the device's cycles,
// the cheapest plan that fits kept (or the preferred one), and that plan proven in its banks.
// On the int8 corpus (MEMLEDGER_CORPUS_INT8_DIR, as tests/exec/int8_corpus_test.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "corpus.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/fit/fit.h"
#include "memledger/onnx/import.h"
#include "memledger/plan/banked_plan.h"

namespace memledger {
namespace {

Graph int8_model(const std::string& name) {
  const char* env = std::getenv("MEMLEDGER_CORPUS_INT8_DIR");
  const std::filesystem::path dir =
      env && *env ? std::filesystem::path(env) : std::filesystem::path(MEMLEDGER_BINARY_DIR) / "corpus-int8";
  const std::filesystem::path file = dir / (name + ".int8.onnx");
  if (!std::filesystem::exists(file)) return {};
  return import_onnx_file(file.string());
}

#define INT8_MODEL_OR_SKIP(var, name)                                                                 \
  const Graph var = int8_model(name);                                                                 \
  if (var.order().empty()) {                                                                          \
    ML_SKIP_OR_FAIL(std::string("no int8 corpus model ") + name + ": set MEMLEDGER_CORPUS_INT8_DIR"); \
  }

// Every step's figures follow from its plan: the slow-bank traffic is the plan's, its cycles
// the extra MACs at the profile's cycles per MAC plus the spill's.
void expect_costs_add_up(const FitResult& fit, const DeviceProfile& p) {
  for (const FitStep& s : fit.steps) {
    EXPECT_GE(s.traffic_bytes, 0) << to_string(s.kind);
    EXPECT_DOUBLE_EQ(s.cost_cycles, static_cast<double>(s.extra_macs) * p.cycles_per_mac + s.spill_cycles)
        << to_string(s.kind);
  }
  const SlowTraffic slow = slow_bank_traffic(fit.plan);
  EXPECT_EQ(fit.best().traffic_bytes, slow.bytes);
  EXPECT_DOUBLE_EQ(fit.best().spill_cycles, slow.cycles);
}

// resnet18's first activation (784 KiB) is larger than any of the STM32H743's banks, and
// its peak-live more than its DTCM: it fits only across them, with a patched first stage.
TEST(BankedFit, Resnet18FitsTheStm32h743OnlyAcrossItsBanks) {
  INT8_MODEL_OR_SKIP(g, "resnet18");
  const DeviceProfile h7 = builtin_profile("stm32h743");
  const FitResult fit = fit_model(g, h7);
  ASSERT_TRUE(fit.fits) << fit.best().detail;
  ASSERT_TRUE(fit.plan.banked);
  int64_t largest_bank = 0;
  for (const MemoryBank& b : h7.banks)
    if (!b.read_only) largest_bank = std::max(largest_bank, b.capacity_bytes);
  EXPECT_GT(fit.steps.front().peak_live_bytes, largest_bank);
  EXPECT_GT(fit.plan.ledger.peak_live_bytes, h7.capacity_bytes);  // more than the DTCM: it spills
  EXPECT_TRUE(fit.patches.has_value());
  EXPECT_GT(fit.best().traffic_bytes, 0);
  for (const auto& use : fit.plan.banked->solution.banks) EXPECT_TRUE(use.fits);
  expect_costs_add_up(fit, h7);

  // The fit's very plan runs bit-identically, its writable banks end to end with guards.
  const std::vector<Tensor> inputs = random_inputs(g, 3);
  const std::vector<Tensor> expected = run_graph(g, inputs, {.kernels = KernelSet::kReference});
  const MemoryPlan laid = arena_layout(fit.plan);
  EXPECT_FALSE(laid.banked);
  const ArenaRunReport run = run_in_arena(fit.graph, laid, inputs, expected, {.kernels = KernelSet::kReference});
  EXPECT_TRUE(run.clean()) << run.failure;
  EXPECT_TRUE(run.violations.empty());
  EXPECT_TRUE(run.differing_outputs.empty());
}

// mobilenet_v2 fits the ESP32-S3 as it is, its activations spilled to the PSRAM, and by
// patches within its SRAM. By default the step of fewest cycles among those that fit is
// kept; a preference for spills keeps a plan without extra MACs, one for patches a plan
// without slow-bank traffic.
TEST(BankedFit, PreferenceChoosesBetweenSpillsAndPatches) {
  INT8_MODEL_OR_SKIP(g, "mobilenet_v2");
  const DeviceProfile esp = builtin_profile("esp32s3");
  FitOptions options{.all_steps = true};
  const FitResult cheapest = fit_model(g, esp, options);
  ASSERT_TRUE(cheapest.fits);
  expect_costs_add_up(cheapest, esp);
  const FitStep& kept = cheapest.best();
  bool spill_fits = false, patches_fit = false;
  for (const FitStep& s : cheapest.steps) {
    if (!s.fits) continue;
    EXPECT_LE(kept.cost_cycles, s.cost_cycles) << to_string(s.kind);
    spill_fits = spill_fits || (s.extra_macs == 0 && s.traffic_bytes > 0);
    patches_fit = patches_fit || s.traffic_bytes == 0;
  }
  EXPECT_TRUE(spill_fits);
  EXPECT_TRUE(patches_fit);

  options.prefer = FitPreference::kSpill;
  const FitResult spill = fit_model(g, esp, options);
  ASSERT_TRUE(spill.fits);
  EXPECT_EQ(spill.best().extra_macs, 0);
  EXPECT_GT(spill.best().traffic_bytes, 0);
  EXPECT_FALSE(spill.patches.has_value());

  options.prefer = FitPreference::kPatches;
  const FitResult patches = fit_model(g, esp, options);
  ASSERT_TRUE(patches.fits);
  EXPECT_EQ(patches.best().traffic_bytes, 0);
  EXPECT_GT(patches.best().extra_macs, 0);

  // Without all_steps the driver stops at the first patched plan that fits (later patch
  // strategies add MACs as a rule, not always: here patches of patches cost fewer), so
  // its plan fits, at no fewer cycles than the best of every step.
  const FitResult quick = fit_model(g, esp);
  EXPECT_TRUE(quick.fits);
  EXPECT_GE(quick.best().cost_cycles, kept.cost_cycles);
  EXPECT_LE(quick.steps.size(), cheapest.steps.size());
}

}  // namespace
}  // namespace memledger
