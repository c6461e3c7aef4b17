// Fit's strategy table (issue 34, item 1): the entries in the order of fit/fit.h's steps,
// each named and summarised; the one keep rule on hand-made attempts; a fit's script names
// the entry behind each step, in the table's order; the shared peak-live is the plan's
// figure; and the library's refusals name the value, not a command-line flag.
#include "memledger/fit/strategy.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "memledger/core/error.h"
#include "memledger/fit/peak_live.h"
#include "memledger/fit/schedule.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

Graph conv_bn_relu() { return import_onnx_file(MEMLEDGER_SOURCE_DIR "/tests/data/onnx/conv_bn_relu.onnx"); }

TEST(FitStrategy, TheTableNamesEveryEntryOnceInTheStepsOrder) {
  const auto table = fit_strategies();
  std::vector<std::string> names;
  std::set<std::string> unique;
  int forced = 0;
  for (const FitStrategy& s : table) {
    names.emplace_back(s.name);
    unique.emplace(s.name);
    EXPECT_FALSE(s.summary.empty()) << s.name;
    EXPECT_FALSE(s.cost.empty()) << s.name;
    EXPECT_NE(s.applies, nullptr) << s.name;
    EXPECT_NE(s.run, nullptr) << s.name;
    forced += s.forced ? 1 : 0;
  }
  EXPECT_EQ(unique.size(), names.size());
  EXPECT_EQ(forced, 1);  // a forced patch grid, the user's
  const std::vector<std::string> expected = {
      "layer_by_layer", "memory_order",   "in_place",     "fused_gates",    "forced_patches",
      "patches",        "nested_patches", "second_stage", "pooled_patches", "pooled_second_stage"};
  EXPECT_EQ(names, expected);
}

FitAttempt attempt_with_peak(int64_t peak, bool free = false) {
  return {.step = {.peak_live_bytes = peak}, .candidate = FitCandidate{}, .free = free};
}

TEST(FitStrategy, OneRuleKeepsWhatLowersPeakLiveUntilThePlanFits) {
  FitResult so_far;
  // The first step is kept whatever it costs (so_far.plan's default `fits` does not count).
  EXPECT_TRUE(keeps_attempt(so_far, attempt_with_peak(1000), false));
  so_far.steps.push_back({});
  so_far.plan.fits = false;
  so_far.plan.ledger.peak_live_bytes = 1000;
  EXPECT_TRUE(keeps_attempt(so_far, attempt_with_peak(999), false));
  EXPECT_FALSE(keeps_attempt(so_far, attempt_with_peak(1000), false));
  EXPECT_FALSE(keeps_attempt(so_far, attempt_with_peak(1001), false));
  // A free step (no MACs, no traffic) is kept also at an equal peak, never above it.
  EXPECT_TRUE(keeps_attempt(so_far, attempt_with_peak(1000, true), false));
  EXPECT_FALSE(keeps_attempt(so_far, attempt_with_peak(1001, true), false));
  // Forced: the user's grid is the plan, better or not.
  EXPECT_TRUE(keeps_attempt(so_far, attempt_with_peak(5000), true));
  // Nothing tried: never kept, even forced.
  FitAttempt nothing{.step = {.peak_live_bytes = 1}};
  EXPECT_FALSE(keeps_attempt(so_far, nothing, false));
  EXPECT_FALSE(keeps_attempt(so_far, nothing, true));
  // Once the kept plan fits, later steps are only measured.
  so_far.plan.fits = true;
  EXPECT_FALSE(keeps_attempt(so_far, attempt_with_peak(1), false));
  EXPECT_TRUE(keeps_attempt(so_far, attempt_with_peak(5000), true));
}

TEST(FitStrategy, TheScriptNamesTheEntryOfEachStepInTheTablesOrder) {
  DeviceProfile tiny = builtin_profile("teaching");
  tiny.capacity_bytes = 2048;  // conv_bn_relu does not fit: every applicable entry runs
  const FitResult fit = fit_model(conv_bn_relu(), tiny);
  ASSERT_GE(fit.steps.size(), 5u);
  const auto table = fit_strategies();
  size_t at = 0;
  for (const FitStep& step : fit.steps) {
    while (at < table.size() && table[at].name != step.strategy) ++at;
    ASSERT_LT(at, table.size()) << "step '" << to_string(step.kind) << "' names '" << step.strategy
                                << "', not a later entry of the table";
    EXPECT_EQ(step.traffic_bytes, 0);  // one arena: nothing moves to a slower bank
  }
  EXPECT_EQ(fit.steps.front().strategy, "layer_by_layer");
  EXPECT_EQ(fit.steps[3].strategy, "patches");
  // A forced grid runs the forced entry, not the searches, and is kept.
  const Graph g = conv_bn_relu();
  const FitResult forced = fit_model(g, builtin_profile("teaching"), {.patch = parse_patch_spec(g, "2x2@r")});
  EXPECT_EQ(forced.steps.back().strategy, "forced_patches");
  EXPECT_TRUE(forced.steps.back().kept);
  for (const FitStep& step : forced.steps) EXPECT_NE(step.strategy, "patches");
}

TEST(FitStrategy, ThePeakLiveFitScreensByIsThePlansFigure) {
  const Graph g = conv_bn_relu();
  for (const char* device : {"teaching", "mcu", "host"})
    for (bool in_place : {false, true}) {
      const DeviceProfile p = builtin_profile(device);
      const PlanOptions options{.in_place = in_place};
      const MemoryPlan plan = plan_memory(g, p, options);
      EXPECT_EQ(peak_live(g, p, options), plan.ledger.peak_live_bytes) << device << in_place;
      EXPECT_EQ(peak_live_of_order(g, g.order(), p, options), plan.ledger.peak_live_bytes) << device;
      EXPECT_EQ(screening_ledger(g, p, options).timeline.size(), plan.ledger.timeline.size());
    }
}

TEST(FitStrategy, LibraryRefusalsNameTheValueNotAFlag) {
  const Graph g = conv_bn_relu();
  for (const char* bad : {"4x4", "2x2@nosuch"}) {
    try {
      parse_patch_spec(g, bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  try {
    parse_schedule_kind("fastest");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "'fastest': expected model or memory");
  }
}

}  // namespace
}  // namespace memledger
