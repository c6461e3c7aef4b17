// report/json_report: the figures of a plan report (schema_version 1) against the
// hand-planned alias chain of tests/plan/hand_graphs.h under the host profile.
#include "memledger/report/json_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../plan/hand_graphs.h"
#include "memledger/device/profile.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {
namespace {

using nlohmann::json;

json report_of(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options = {}) {
  const MemoryPlan plan = plan_memory(graph, profile, options);
  return json::parse(plan_report_json(graph, plan, profile, "chain.onnx"));
}

const json& buffer_named(const json& report, const std::string& name) {
  for (const json& b : report["buffers"])
    if (b["name"] == name) return b;
  throw std::runtime_error("no buffer " + name);
}

// x, shape and a (256 + 64 + 256 B) are live together at step 0: the arena needs 576 B,
// peak-live, so there is no fragmentation and the placement is optimal.
TEST(JsonReport, FiguresOfTheAliasChain) {
  const json r = report_of(hand::alias_chain(), builtin_profile("host"));
  EXPECT_EQ(r["schema_version"], kReportSchemaVersion);
  EXPECT_EQ(r["model"], "chain.onnx");
  EXPECT_EQ(r["device"]["name"], "host");
  EXPECT_EQ(r["device"]["alignment_bytes"], 64);
  EXPECT_EQ(r["device"]["capacity_bytes"], 0);
  const json& l = r["ledger"];
  EXPECT_EQ(l["logical_bytes"], 1296);
  EXPECT_EQ(l["physical_bytes"], 576);
  EXPECT_EQ(l["external_bytes"], 0);
  EXPECT_EQ(l["peak_live_bytes"], 576);
  EXPECT_EQ(l["peak_step"], 0);
  EXPECT_EQ(l["peak_live_counts_inputs"], true);
  EXPECT_EQ(l["peak_live_with_inputs_bytes"], 576);
  EXPECT_EQ(l["peak_live_without_inputs_bytes"], 320);
  EXPECT_EQ(l["by_category"]["activation"],
            (json{{"logical_bytes", 768}, {"physical_bytes", 256}, {"external_bytes", 0}, {"count", 3}}));
  EXPECT_EQ(l["by_category"]["output"]["physical_bytes"], 0);
  const json& p = r["plan"];
  EXPECT_EQ(p["arena_bytes"], 576);
  EXPECT_EQ(p["lower_bound_bytes"], 576);
  EXPECT_EQ(p["fragmentation_bytes"], 0);
  EXPECT_EQ(p["optimal"], true);
  EXPECT_EQ(p["fits"], true);  // the host sets no capacity
}

// Every buffer with its steps, bytes and offset; an alias names the buffer it is written
// over and sits at its offset; the timeline lists the buffers live by their own steps.
TEST(JsonReport, BuffersAndTimeline) {
  const json r = report_of(hand::alias_chain(), builtin_profile("host"));
  ASSERT_EQ(r["buffers"].size(), 6u);
  const json& a = buffer_named(r, "a");
  const json& y = buffer_named(r, "y");
  EXPECT_EQ(a["alias_of"], nullptr);
  EXPECT_EQ(y["alias_of"], "c");
  EXPECT_EQ(buffer_named(r, "c")["alias_of"], "b");
  EXPECT_EQ(y["offset"], a["offset"]);
  EXPECT_EQ(y["category"], "output");
  EXPECT_EQ(y["dtype"], "float32");
  EXPECT_EQ(y["shape"], (json{1, 64}));
  EXPECT_EQ(y["first_step"], 3);
  EXPECT_EQ(y["last_step"], 3);
  const json& shape = buffer_named(r, "shape");
  EXPECT_EQ(shape["logical_bytes"], 16);
  EXPECT_EQ(shape["physical_bytes"], 64);
  EXPECT_EQ(shape["dtype"], "int64");
  // The three owners are live together at step 0, so their 576 B are disjoint.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const char* name : {"x", "shape", "a"}) {
    const json& b = buffer_named(r, name);
    ranges.emplace_back(b["offset"].get<int64_t>(), b["offset"].get<int64_t>() + b["physical_bytes"].get<int64_t>());
  }
  std::sort(ranges.begin(), ranges.end());
  EXPECT_EQ(ranges.front().first, 0);
  EXPECT_LE(ranges[0].second, ranges[1].first);
  EXPECT_LE(ranges[1].second, ranges[2].first);
  EXPECT_EQ(ranges.back().second, 576);

  ASSERT_EQ(r["timeline"].size(), 4u);
  // Schema 2: per step what starts and ends there; the ledger names what is live at the peak.
  EXPECT_EQ(r["schema_version"], 2);
  EXPECT_EQ(r["timeline"][0], (json{{"step", 0},
                                    {"node", "relu"},
                                    {"live_bytes", 576},
                                    {"live_count", 3},
                                    {"starts", {"x", "a", "shape"}},
                                    {"ends", {"x"}}}));
  EXPECT_EQ(r["timeline"][3], (json{{"step", 3},
                                    {"node", "exp"},
                                    {"live_bytes", 320},
                                    {"live_count", 3},
                                    {"starts", {"y"}},
                                    {"ends", {"c", "y", "shape"}}}));
  EXPECT_EQ(r["ledger"]["live_at_peak"], (json{"x", "a", "shape"}));
}

// An input outside the arena has no offset (null), is marked external, and peak-live
// leaves it out: 320 B.
TEST(JsonReport, AnExternalInputHasNoOffset) {
  DeviceProfile p = builtin_profile("host");
  p.inputs = InputResidency::kExternal;
  const json r = report_of(hand::alias_chain(), p);
  const json& x = buffer_named(r, "x");
  EXPECT_EQ(x["external"], true);
  EXPECT_EQ(x["offset"], nullptr);
  EXPECT_EQ(r["device"]["inputs"], "external");
  EXPECT_EQ(r["ledger"]["external_bytes"], 256);
  EXPECT_EQ(r["ledger"]["peak_live_bytes"], 320);
  EXPECT_EQ(r["ledger"]["peak_live_counts_inputs"], false);
  EXPECT_EQ(r["plan"]["arena_bytes"], 320);
  EXPECT_EQ(r["timeline"][0]["starts"], (json{"a", "shape"}));
  EXPECT_EQ(r["timeline"][0]["live_count"], 2);
  EXPECT_EQ(r["ledger"]["live_at_peak"], (json{"a", "shape"}));
}

}  // namespace
}  // namespace memledger
