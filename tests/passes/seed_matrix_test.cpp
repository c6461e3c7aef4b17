// Generates docs/seed-matrix.md from real runs (DESIGN.md §6): each case optimized with
// the default pipeline (or as stated), verified on seeded inputs, planned before and
// after. The file is a golden: MEMLEDGER_UPDATE_GOLDEN=1 rewrites it, otherwise the test
// fails when the code's figures no longer match what the document says.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "memledger/device/profile.h"
#include "memledger/ir/affine.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/teaching/variants.h"
#include "memledger/verify/optimize.h"
#include "memledger/verify/verify.h"
#include "pass_models.h"

namespace memledger {
namespace {

using namespace memledger::testing;

struct Case {
  std::string name;
  Graph graph;
  std::string device = "teaching";
  PassOptions options = {};
  PlanOptions plan = {};
  std::optional<DType> storage = {};  // overrides the device's storage (int4 rows)
  // Set: not a rewrite but a kernel choice in the IR (historical → current rule); the
  // graphs are planned as built, since a file cannot state the rule.
  bool kernel_rule = false;
};

// The same graph with every Affine on the current kernel rule (no workspace).
Graph with_current_rule(Graph g) {
  for (NodeId id : g.order())
    if (is_affine(g.node(id))) g.attributes(id)["rule"] = std::string(to_string(AffineRule::kCurrent));
  return g;
}

Graph with_historical_rule(Graph g) {
  for (NodeId id : g.order())
    if (is_affine(g.node(id))) g.attributes(id)["rule"] = std::string(to_string(AffineRule::kHistorical));
  return g;
}

std::string row(const Case& c) {
  DeviceProfile profile = resolve_device(c.device);
  if (c.storage) profile.storage = c.storage;
  const std::string device = c.device + (c.storage ? fmt::format(", {} storage", dtype_name(*c.storage)) : "");
  const PlacementOptions greedy{.algorithm = allocate::Algorithm::kGreedy};
  const VerifyOptions verify{.seed = 1, .rtol = 1e-4};
  if (c.kernel_rule) {
    const Graph after = with_current_rule(c.graph);
    const Verification v = verify_rewrite(c.graph, after, verify);
    EXPECT_TRUE(v.ok) << c.name << "\n" << v.describe();
    const Ledger a = plan_memory(c.graph, profile, c.plan, greedy).ledger;
    const Ledger b = plan_memory(after, profile, c.plan, greedy).ledger;
    EXPECT_LT(b.peak_live_bytes, a.peak_live_bytes) << c.name;
    return fmt::format("| {} | {} | {} → {} | {} → {} | {} → {} | {} | {:.3g} |\n", c.name, device, a.logical_bytes,
                       b.logical_bytes, a.physical_bytes, b.physical_bytes, a.peak_live_bytes, b.peak_live_bytes,
                       "(kernel rule historical → current)", v.max_abs);
  }
  OptimizeOptions options{.passes = {}, .pass_options = c.options, .verify = verify, .dump = {}};
  // Before and after as model files hold them: an Affine built in the IR is Mul + Add there.
  Graph before = c.graph;
  lower_affine(before);
  const OptimizeResult r = optimize_graph(before, options);
  EXPECT_TRUE(r.verification.ok) << c.name << "\n" << r.verification.describe();
  const Ledger a = plan_memory(before, profile, c.plan, greedy).ledger;
  const Ledger b = plan_memory(r.graph, profile, c.plan, greedy).ledger;
  EXPECT_LE(b.peak_live_bytes, a.peak_live_bytes) << c.name;
  std::string changed;
  for (const PipelineStep& s : r.steps)
    if (s.result.changed()) changed += (changed.empty() ? "" : ", ") + s.pass;
  return fmt::format("| {} | {} | {} → {} | {} → {} | {} → {} | {} | {:.3g} |\n", c.name, device, a.logical_bytes,
                     b.logical_bytes, a.physical_bytes, b.physical_bytes, a.peak_live_bytes, b.peak_live_bytes,
                     changed.empty() ? "(none)" : changed, r.verification.max_abs);
}

TEST(SeedMatrix, GeneratedFromRealRuns) {
  const PlanOptions donate{.donate_inputs = true, .in_place = true};
  std::vector<Case> cases;
  cases.push_back(
      {"distinct [1,12,20,28], expanded Mul+Add (teaching model)", mul_add({1, 12, 20, 28}, {1, 12, 20, 28})});
  cases.push_back({"distinct [1,12,20,28], expanded, NCHW host", mul_add({1, 12, 20, 28}, {1, 12, 20, 28}), "host"});
  cases.push_back({"distinct [1,12,20,28], expanded, inputs donated (variant C)",
                   mul_add({1, 12, 20, 28}, {1, 12, 20, 28}),
                   "teaching",
                   {},
                   donate});
  cases.push_back({"C==W [1,20,16,20], expanded", mul_add({1, 20, 16, 20}, {1, 20, 16, 20})});
  cases.push_back({"C==H [1,16,16,28], expanded", mul_add({1, 16, 16, 28}, {1, 16, 16, 28})});
  cases.push_back({"C=1 [1,1,20,28], expanded", mul_add({1, 1, 20, 28}, {1, 1, 20, 28})});
  for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{{"distinct", {1, 12, 20, 28}},
                                                                              {"C==W", {1, 20, 16, 20}},
                                                                              {"C==H", {1, 16, 16, 28}},
                                                                              {"C=1", {1, 1, 20, 28}}}) {
    Case c{fmt::format("int4: {} {}, expanded", name, shape_to_string(shape)), mul_add(shape, shape)};
    c.storage = DType::kInt4;
    cases.push_back(std::move(c));
  }
  cases.push_back({"bypass branch, expanded, inputs donated (variant D)",
                   mul_add({1, 12, 20, 28}, {1, 12, 20, 28}, true),
                   "teaching",
                   {},
                   donate});
  cases.push_back({"unit scale, bias 0.3 (exact → bias Add)", affine_between_relus(1.0f, 0.3f)});
  cases.push_back({"unit scale, zero bias, float (→ identity)", affine_between_relus(1.0f, 0.0f)});
  cases.push_back({"int8 Q→DQ→Q→DQ, same parameters (→ identity)", qdq_chain(0.05f)});
  cases.push_back({"int8 Q→DQ→Q→DQ, other parameters (the middle DQ→Q is the one requantize; no exact shorter form)",
                   qdq_chain(0.1f)});
  cases.push_back({"int8 Q→DQ → uint8 Q→DQ, same scale, zero point 0 → 128 (→ one Q→DQ pair)",
                   qdq_chain(0.05f, DType::kUInt8, 128)});
  cases.push_back({"int8 DQ→Mul(1)→Add(0)→Q, other parameters (→ single requantize)", qdq_affine(0.1f, 1.0f, 0.0f)});
  cases.push_back({"int8 DQ→Mul(1)→Add(0)→Q, same parameters (DQ→Q stays: an exact copy from input to output)",
                   qdq_affine(0.05f, 1.0f, 0.0f)});
  cases.push_back({"near-unit scale 1.0001 (left alone)", affine_between_relus(1.0001f, 0.0f)});
  cases.push_back({"near-unit scale 1.0001, --approximate 1e-3",
                   affine_between_relus(1.0001f, 0.0f),
                   "teaching",
                   {.approximate_tolerance = 1e-3}});
  cases.push_back({"seed thread: Conv1d(64,64,k=1,groups=4) over x.repeat (Tile)", grouped_conv_over_repeat("tile")});
  cases.push_back({"seed thread, repeat as Expand+Reshape", grouped_conv_over_repeat("expand")});
  const auto variants = teaching::affine_variants();
  Case historical_expanded{"historical workspace vs none: variant A (expanded parameters)", variants[0].graph};
  historical_expanded.kernel_rule = true;
  cases.push_back(std::move(historical_expanded));
  Case historical_compact{"historical workspace vs none: variant B (compact parameters)",
                          with_historical_rule(variants[1].graph)};
  historical_compact.kernel_rule = true;
  cases.push_back(std::move(historical_compact));
  Case historical_donated{"historical workspace vs none: variant C (compact, inputs donated)",
                          with_historical_rule(variants[2].graph)};
  historical_donated.plan = variants[2].options;
  historical_donated.kernel_rule = true;
  cases.push_back(std::move(historical_donated));

  std::string doc =
      "# The seed matrix\n\n"
      "Generated by `tests/passes/seed_matrix_test.cpp` from real runs (rewrite with\n"
      "`MEMLEDGER_UPDATE_GOLDEN=1`; the test fails when the figures drift). Each case is\n"
      "optimized with the default pipeline (every exact pass), verified on seeded inputs\n"
      "(seed 1) and planned before → after, both as an ONNX file holds them (a fused Affine\n"
      "is written as Mul + Add, so its intermediate counts). Bytes; peak-live is the live-at-once maximum.\n"
      "The largest output difference is max|after − before| over all outputs.\n\n"
      "| case | device | logical | physical | peak-live | passes that changed it | max abs diff |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const Case& c : cases) doc += row(c);
  doc +=
      "\nThe int4 rows plan the same models with the teaching device's storage set to int4 (bits\n"
      "counted before rounding, DESIGN.md §4.1); libonnx 1.12 files hold no int4 tensors, so the\n"
      "models are built through the library and verified in float. The historical rows are a\n"
      "kernel rule, not a rewrite: the same Affine with the historical rule (a workspace the size\n"
      "of its output) and with the current one (none, in place allowed); the rule exists only in\n"
      "the IR, so they are planned as built.\n";

  const std::filesystem::path file = std::filesystem::path(MEMLEDGER_SOURCE_DIR) / "docs/seed-matrix.md";
  if (update_golden()) {
    std::ofstream(file, std::ios::binary) << doc;
    return;
  }
  std::ifstream in(file, std::ios::binary);
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(doc, expected.str()) << file << " is out of date: MEMLEDGER_UPDATE_GOLDEN=1 regenerates it";
}

}  // namespace
}  // namespace memledger
