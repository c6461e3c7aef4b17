// optimize end to end: the teaching model comes out smaller on disk and in peak-live, the
// ledger diff's parts add up, and every corpus model verifies without raising peak-live.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "corpus.h"
#include "memledger/device/profile.h"
#include "memledger/onnx/export.h"
#include "memledger/onnx/import.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/report/diff.h"
#include "memledger/report/json_report.h"
#include "memledger/teaching/variants.h"
#include "memledger/verify/optimize.h"

namespace memledger {
namespace {

const PlacementOptions kGreedy{.algorithm = allocate::Algorithm::kGreedy};

std::string report(const Graph& g, const DeviceProfile& profile) {
  return plan_report_json(g, plan_memory(g, profile, {}, kGreedy), profile, g.name);
}

void expect_parts_add_up(const FigureChange& c) { EXPECT_EQ(c.constants + c.layout + c.lifetimes, c.total()); }

TEST(Optimize, TeachingModelSmallerOnDiskAndInPeakLive) {
  const Graph before = teaching::expanded_mul_add_model();
  const OptimizeResult r = optimize_graph(before);
  EXPECT_TRUE(r.verification.ok) << r.verification.describe();
  EXPECT_LT(export_onnx_bytes(r.graph).size(), export_onnx_bytes(before).size() / 10);
  for (const char* device : {"host", "teaching"}) {
    const DeviceProfile profile = resolve_device(device);
    const int64_t peak_before = plan_memory(before, profile, {}, kGreedy).ledger.peak_live_bytes;
    const int64_t peak_after = plan_memory(r.graph, profile, {}, kGreedy).ledger.peak_live_bytes;
    EXPECT_LT(peak_after, peak_before) << device;
  }
}

TEST(Diff, PartsAddUpToTheTotal) {
  const Graph before = teaching::expanded_mul_add_model();
  const Graph after = optimize_graph(before).graph;
  for (const char* device : {"host", "teaching"}) {
    const DeviceProfile profile = resolve_device(device);
    const ReportDiff d = diff_reports(report(before, profile), report(after, profile));
    expect_parts_add_up(d.logical);
    expect_parts_add_up(d.physical);
    expect_parts_add_up(d.peak_live);
    EXPECT_LT(d.logical.constants, 0) << device;
    EXPECT_LT(d.peak_live.total(), 0) << device;
    EXPECT_EQ(d.logical.layout, 0);
  }
}

// The rewritten graph is what the file holds: optimize's "after" and `plan` of the written
// file agree on every figure. (The fused Affine has no intermediate; the file's Mul + Add
// does, so planning the in-memory graph overstated the logical change by that buffer.)
TEST(Optimize, AfterIsThePlanOfTheWrittenFile) {
  const std::string model = std::string(MEMLEDGER_SOURCE_DIR) + "/tests/data/onnx/affine_distinct.onnx";
  const Graph before = import_onnx_file(model);
  const OptimizeResult r = optimize_graph(before);
  ASSERT_TRUE(r.verification.ok) << r.verification.describe();
  EXPECT_EQ(r.lowered, 1);
  const Graph written = import_onnx_bytes(export_onnx_bytes(r.graph));
  EXPECT_EQ(written.order().size(), r.graph.order().size());
  const DeviceProfile host = resolve_device("host");
  const Ledger a = plan_memory(r.graph, host, {}, kGreedy).ledger;
  const Ledger b = plan_memory(written, host, {}, kGreedy).ledger;
  EXPECT_EQ(a.logical_bytes, b.logical_bytes);
  EXPECT_EQ(a.physical_bytes, b.physical_bytes);
  EXPECT_EQ(a.peak_live_bytes, b.peak_live_bytes);
}

// The same through the program, as a user would check it: optimize --json, then plan --json
// of the written model; the "after" ledger and the plan's ledger are equal.
TEST(Optimize, CommandLineAfterMatchesPlanOfOutput) {
  const std::filesystem::path dir = std::filesystem::path(MEMLEDGER_BINARY_DIR) / "optimize_after_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string model = std::string(MEMLEDGER_SOURCE_DIR) + "/tests/data/onnx/affine_distinct.onnx";
  const std::string out = (dir / "out.onnx").string(), opt = (dir / "opt.json").string(),
                    plan = (dir / "plan.json").string(), log = (dir / "log.txt").string();
  ASSERT_EQ(
      std::system(fmt::format("{} optimize {} -o {} --json {} > {} 2>&1", MEMLEDGER_CLI, model, out, opt, log).c_str()),
      0);
  ASSERT_EQ(std::system(fmt::format("{} plan {} --json {} > {} 2>&1", MEMLEDGER_CLI, out, plan, log).c_str()), 0);
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
  };
  const nlohmann::json after = read(opt)["after"]["ledger"], planned = read(plan)["ledger"];
  for (const char* key : {"logical_bytes", "physical_bytes", "peak_live_bytes"})
    EXPECT_EQ(after[key], planned[key]) << key;
}

TEST(Diff, MalformedReportIsAnError) {
  EXPECT_THROW(diff_reports("{}", "{}"), Error);
  EXPECT_THROW(diff_reports("not json", "{}"), Error);
}

TEST(Optimize, EveryCorpusModelVerifiesAndNeverRaisesPeakLive) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  const DeviceProfile host = resolve_device("host");
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    ++models;
    const Graph before = import_onnx_file(entry.path().string());
    const OptimizeResult r = optimize_graph(before);
    EXPECT_TRUE(r.verification.ok) << entry.path() << "\n" << r.verification.describe();
    const int64_t peak_before = plan_memory(before, host, {}, kGreedy).ledger.peak_live_bytes;
    const int64_t peak_after = plan_memory(r.graph, host, {}, kGreedy).ledger.peak_live_bytes;
    EXPECT_LE(peak_after, peak_before) << entry.path();
    int64_t saved = 0;
    for (const PipelineStep& s : r.steps) saved += s.result.bytes_saved;
    std::printf("corpus %s: nodes %zu -> %zu, constants saved %lld B, peak-live %lld -> %lld, max|diff| %.3g\n",
                entry.path().filename().c_str(), before.order().size(), r.graph.order().size(),
                static_cast<long long>(saved), static_cast<long long>(peak_before), static_cast<long long>(peak_after),
                r.verification.max_abs);
  }
  EXPECT_GT(models, 0) << "no .onnx in " << dir;
}

}  // namespace
}  // namespace memledger
