// The int8 corpus (scripts/corpus/quantize_qdq.py: QDQ models in onnxruntime's layout, with
// onnxruntime-node's output beside each) end to end: imported with its QDQ folded into
// integer operators, run by the integer kernels, equal to onnxruntime within one output LSB
// on ≥ 99.9 % of elements with the same top-1, and bit-identical inside its planned arena.
// The corpus folder: MEMLEDGER_CORPUS_INT8_DIR, else <build>/corpus-int8 (skipped when
// absent unless outside parts are required, as tests/corpus.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "corpus.h"
#include "exec/fast/isa.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/ir/integer_node.h"
#include "memledger/onnx/import.h"
#include "memledger/onnx/tensor_file.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {
namespace {

std::filesystem::path int8_corpus_dir() {
  const char* env = std::getenv("MEMLEDGER_CORPUS_INT8_DIR");
  return env && *env ? std::filesystem::path(env) : std::filesystem::path(MEMLEDGER_BINARY_DIR) / "corpus-int8";
}

TEST(Int8Corpus, RunsAsOnnxruntimeDoesAndBitIdenticallyInItsArena) {
  const std::filesystem::path dir = int8_corpus_dir();
  if (!std::filesystem::exists(dir / "manifest.json"))
    ML_SKIP_OR_FAIL("no int8 corpus at " + dir.string() +
                    ": build it with `cmake --build <build> --target corpus-int8` or set MEMLEDGER_CORPUS_INT8_DIR");
  std::ifstream manifest_file(dir / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(manifest_file);
  int models = 0;
  for (const auto& [name, entry] : manifest.at("models").items()) {
    SCOPED_TRACE(name);
    const std::filesystem::path model = dir / entry.at("file").at("file").get<std::string>();
    const std::filesystem::path input = dir / entry.at("input").at("file").get<std::string>();
    const std::filesystem::path expected = dir / entry.at("ort_output").at("file").get<std::string>();
    if (!std::filesystem::exists(model) || !std::filesystem::exists(expected)) continue;
    ++models;
    const Graph g = import_onnx_file(model.string());
    ASSERT_TRUE(is_quantized_model(g));
    const std::vector<Tensor> inputs{read_tensor_file(input.string()).tensor};
    const std::vector<Tensor> ours = run_graph(g, inputs, {.kernels = KernelSet::kFast});
    // Where the fast set runs none of the nodes no activation is kept channels-last (the count
    // once took the folded-away float values for activations). With int8 dot products it runs
    // every node but the float input's QuantizeLinear and the output's DequantizeLinear (without
    // them, a Conv whose sums could pass 2^24 stays on the reference kernel).
    const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
    if (fast.fast_node_count() == 0) {
      EXPECT_NE(fast.summary().find("; 0 activations channels-last"), std::string::npos) << fast.summary();
    }
    if (exec::fast::has_int8_dot_products()) {
      for (NodeId id : g.order()) {
        const Node& n = g.node(id);
        if (n.op != "QuantizeLinear" && n.op != "DequantizeLinear") {
          EXPECT_EQ(fast.kernel_set_of(id), KernelSet::kFast) << n.label() << ": " << fast.summary();
        }
      }
    }
    const Tensor reference = read_tensor_file(expected.string()).tensor;
    ASSERT_EQ(ours.at(0).shape(), reference.shape());
    ASSERT_EQ(ours[0].dtype(), DType::kFloat32);
    const double scale = entry.at("scales").at("output").at("scale").get<double>();
    const auto a = ours[0].data<float>(), b = reference.data<float>();
    size_t within = 0, top_ours = 0, top_ref = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      within += std::fabs(static_cast<double>(a[i]) - b[i]) <= scale * 1.0001;
      if (a[i] > a[top_ours]) top_ours = i;
      if (b[i] > b[top_ref]) top_ref = i;
    }
    // Each model of the test command's corpus, mobilenet_v3_small too, reaches 100 % since the
    // integer Conv and Gemm add the output's zero point before rounding (rounding first left
    // mobilenet_v3_small at 99.6 %). Of the whole corpus (--all), mobilenet_v3_large misses:
    // 99.7 % (issue 35, docs/benchmarks.md).
    const double required = 0.999;
    EXPECT_GE(static_cast<double>(within), required * static_cast<double>(a.size()))
        << within << " of " << a.size() << " within one LSB";
    EXPECT_EQ(top_ours, top_ref);

    const MemoryPlan plan = plan_memory(g, builtin_profile("host"));
    const ArenaRunReport r = run_in_arena(g, plan, inputs);
    std::string why = r.failure;
    for (const auto& v : r.violations) why += "\n" + v.message;
    for (const auto& o : r.differing_outputs) why += "\n" + o;
    EXPECT_TRUE(r.clean()) << why;
    EXPECT_TRUE(r.untouched_workspaces.empty());
  }
  EXPECT_GT(models, 0);
}

}  // namespace
}  // namespace memledger
