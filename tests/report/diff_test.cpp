// report/diff: the attribution of a change to constants, layout and lifetimes, on two
// plans of the hand-planned alias chain (tests/plan/hand_graphs.h, host profile): without
// in-place reuse, and with it and the input donated (the whole chain in x's bytes).
#include "memledger/report/diff.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../plan/hand_graphs.h"
#include "memledger/core/error.h"
#include "memledger/device/profile.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/report/json_report.h"

namespace memledger {
namespace {

std::string report_of(const PlanOptions& options, const std::string& model) {
  const Graph graph = hand::alias_chain();
  const DeviceProfile host = builtin_profile("host");
  return plan_report_json(graph, plan_memory(graph, host, options), host, model);
}

// Before (no reuse): six owners, 5 × 256 + 64 = 1344 B physical; constants 16 (the shape's
// logical bytes), layout 48 (its padding), lifetimes 1280. After (in place, donated): x
// and shape own 320 B: 16, 48, 256. Logical bytes (1296) do not change.
// Peak-live: before, step 0 holds x, shape and a: 16 + 48 + 512 = 576; after, x and shape:
// 16 + 48 + 256 = 320. Every saving is lifetimes: storage shared, no padding or constant
// changed.
TEST(Diff, InPlaceReuseIsAttributedToLifetimes) {
  const ReportDiff d =
      diff_reports(report_of({.in_place = false}, "before.onnx"), report_of({.donate_inputs = true}, "after.onnx"));
  EXPECT_EQ(d.model_before, "before.onnx");
  EXPECT_EQ(d.model_after, "after.onnx");
  const auto expect = [](const FigureChange& c, int64_t before, int64_t after, int64_t lifetimes, const char* what) {
    EXPECT_EQ(c.before, before) << what;
    EXPECT_EQ(c.after, after) << what;
    EXPECT_EQ(c.constants, 0) << what;
    EXPECT_EQ(c.layout, 0) << what;
    EXPECT_EQ(c.lifetimes, lifetimes) << what;
    EXPECT_EQ(c.total(), c.constants + c.layout + c.lifetimes) << what;
  };
  expect(d.logical, 1296, 1296, 0, "logical");
  expect(d.physical, 1344, 320, -1024, "physical");
  expect(d.peak_live, 576, 320, -256, "peak-live");
}

// Aligning to 256 B instead of 64 pads the shape's 16 B to 256: physical and peak-live
// grow by 192, all of it layout; logical bytes stay.
TEST(Diff, PaddingIsAttributedToLayout) {
  const Graph graph = hand::alias_chain();
  DeviceProfile wide = builtin_profile("host");
  wide.alignment_bytes = 256;
  const std::string after = plan_report_json(graph, plan_memory(graph, wide), wide, "wide.onnx");
  const ReportDiff d = diff_reports(report_of({}, "host.onnx"), after);
  EXPECT_EQ(d.logical.total(), 0);
  EXPECT_EQ(d.physical.before, 576);
  EXPECT_EQ(d.physical.after, 768);
  EXPECT_EQ(d.physical.layout, 192);
  EXPECT_EQ(d.physical.constants, 0);
  EXPECT_EQ(d.physical.lifetimes, 0);
  EXPECT_EQ(d.peak_live.total(), 192);
  EXPECT_EQ(d.peak_live.layout, 192);
}

// The plan adapter and the JSON adapter give the same split, part for part, on a change
// that both shares storage (in place, donated input) and pads (256 B alignment).
TEST(Diff, PlansAndTheirReportsDiffAlike) {
  const auto same = [](const FigureChange& a, const FigureChange& b, const char* what) {
    EXPECT_EQ(a.before, b.before) << what;
    EXPECT_EQ(a.after, b.after) << what;
    EXPECT_EQ(a.constants, b.constants) << what;
    EXPECT_EQ(a.layout, b.layout) << what;
    EXPECT_EQ(a.lifetimes, b.lifetimes) << what;
  };
  const Graph graph = hand::alias_chain();
  const DeviceProfile host = builtin_profile("host");
  DeviceProfile wide = host;
  wide.alignment_bytes = 256;
  const MemoryPlan before = plan_memory(graph, host, {.in_place = false});
  const MemoryPlan after = plan_memory(graph, wide, {.donate_inputs = true});
  const ReportDiff from_plans = diff_plans(before, after, "a.onnx", "b.onnx");
  const ReportDiff from_json =
      diff_reports(plan_report_json(graph, before, host, "a.onnx"), plan_report_json(graph, after, wide, "b.onnx"));
  EXPECT_EQ(from_plans.model_before, from_json.model_before);
  EXPECT_EQ(from_plans.model_after, from_json.model_after);
  same(from_plans.logical, from_json.logical, "logical");
  same(from_plans.physical, from_json.physical, "physical");
  same(from_plans.peak_live, from_json.peak_live, "peak-live");
  EXPECT_NE(from_plans.physical.total(), 0);
}

// The same report in schema 1 (each step lists every live buffer, no live_at_peak): the
// form older reports on disk have, rebuilt from the schema-2 report's buffers.
std::string as_schema_1(const std::string& report) {
  nlohmann::json r = nlohmann::json::parse(report);
  r["schema_version"] = 1;
  r["ledger"].erase("live_at_peak");
  for (auto& step : r["timeline"]) {
    nlohmann::json live = nlohmann::json::array();
    const int s = step["step"];
    for (const auto& b : r["buffers"])
      if (!b["external"].get<bool>() && b["first_step"].get<int>() <= s && s <= b["last_step"].get<int>())
        live.push_back(b["name"]);
    step.erase("starts");
    step.erase("ends");
    step.erase("live_count");
    step["live"] = live;
  }
  return r.dump();
}

// diff reads both schemas alike: the peak's buffers from schema 2's live_at_peak, or from
// schema 1's timeline.
TEST(Diff, ReadsSchemaOneAndTwoAlike) {
  const std::string before = report_of({.in_place = false}, "before.onnx");
  const std::string after = report_of({.donate_inputs = true}, "after.onnx");
  const ReportDiff two = diff_reports(before, after);
  const ReportDiff one = diff_reports(as_schema_1(before), as_schema_1(after));
  const ReportDiff mixed = diff_reports(as_schema_1(before), after);
  for (const ReportDiff* d : {&one, &mixed}) {
    EXPECT_EQ(d->peak_live.lifetimes, two.peak_live.lifetimes);
    EXPECT_EQ(d->peak_live.layout, two.peak_live.layout);
    EXPECT_EQ(d->peak_live.constants, two.peak_live.constants);
    EXPECT_EQ(d->physical.total(), two.physical.total());
  }
  EXPECT_EQ(two.peak_live.layout, 0);
  EXPECT_EQ(two.peak_live.lifetimes, -256);
  nlohmann::json bad = nlohmann::json::parse(before);
  bad["ledger"]["live_at_peak"] = {1, 2};
  EXPECT_THROW(diff_reports(bad.dump(), after), Error);
}

// A report that is not a plan report is refused with its name and what is missing.
TEST(Diff, AMalformedReportIsNamed) {
  const std::string good = report_of({}, "good.onnx");
  try {
    diff_reports(good, R"({"model": "x"})", "good.json", "bad.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ledger"), std::string::npos) << e.what();
  }
  try {
    diff_reports(R"({"ledger": {"logical_bytes": 1, "physical_bytes": 1}})", good, "old.json", "good.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("old.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("peak_live_bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(diff_reports("not json", good), Error);
}

}  // namespace
}  // namespace memledger
