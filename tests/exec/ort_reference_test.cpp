// Every corpus model (both BatchNorm variants) runs in memledger and in onnxruntime
// (tests/ort/run_model.mjs, one thread) on the corpus's seeded input, memledger with each
// kernel set (fast: oneDNN where it takes a node; reference); the outputs must
// agree within 1e-3 × max|onnxruntime output|: float32 reassociation (another GEMM, folded
// BatchNorm) moves the last bits, a wrong kernel moves far more. Needs the corpus
// (`cmake --build B --target corpus`) and onnxruntime-node (`npm ci --ignore-scripts` in
// tests/ort); without them the test is skipped, except under CI=true where it fails.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "corpus.h"
#include "memledger/core/error.h"
#include "memledger/exec/compare.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/onnx/import.h"
#include "memledger/onnx/tensor_file.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;
constexpr double kRelativeTolerance = 1e-3;

std::string quote(const std::string& s) { return "'" + s + "'"; }

TEST(OrtReference, CorpusModelsMatchOnnxruntime) {
  ML_CORPUS_DIR_OR_SKIP(corpus);
  const fs::path script = fs::path(MEMLEDGER_SOURCE_DIR) / "tests/ort/run_model.mjs";
  const fs::path ort = fs::path(MEMLEDGER_SOURCE_DIR) / "tests/ort/node_modules/onnxruntime-node";
  if (!fs::exists(ort)) ML_SKIP_OR_FAIL("onnxruntime-node missing: cd tests/ort && npm ci --ignore-scripts");
  if (std::system("node --version > /dev/null 2>&1") != 0) ML_SKIP_OR_FAIL("node is not installed");

  std::ifstream in(corpus / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(in);
  const fs::path work = fs::path(MEMLEDGER_BINARY_DIR) / "ort_reference";
  int compared = 0, not_imported = 0;
  for (const auto& [name, entry] : manifest.at("models").items()) {
    const std::string input_file = (corpus / entry.at("input").at("file").get<std::string>()).string();
    const Tensor input = read_tensor_file(input_file).tensor;
    for (const auto& variant : entry.at("variants")) {
      const std::string file = variant.at("file").get<std::string>();
      Graph graph;
      try {
        graph = import_onnx_file((corpus / file).string());
      } catch (const Error& e) {
        // The importer's limit, not the interpreter's: reported, counted, not compared.
        std::printf("%-30s NOT COMPARED: import refused: %s\n", file.c_str(), e.what());
        ++not_imported;
        continue;
      }
      const fs::path out = work / file;
      fs::remove_all(out);
      const std::string command = "node " + quote(script.string()) + " " + quote((corpus / file).string()) + " " +
                                  quote(out.string()) + " " +
                                  quote(entry.at("input_name").get<std::string>() + "=" + input_file);
      ASSERT_EQ(std::system(command.c_str()), 0) << command;
      for (KernelSet set : {KernelSet::kFast, KernelSet::kReference}) {
        const auto start = std::chrono::steady_clock::now();
        Executor executor(graph, {.kernels = set});
        const std::vector<Tensor> ours = executor.run(std::vector<Tensor>{input});
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (set == KernelSet::kFast) {
          EXPECT_GT(executor.fast_node_count(), 0) << file << ": " << executor.summary();
        }
        ASSERT_EQ(ours.size(), graph.outputs().size());
        for (size_t i = 0; i < ours.size(); ++i) {
          const std::string output = graph.value(graph.outputs()[i]).name;
          const Tensor theirs = read_tensor_file((out / (output + ".npy")).string()).tensor;
          const TensorDifference d = compare_tensors(ours[i], theirs, 0, 0);
          ASSERT_TRUE(d.same_shape) << file << " output " << output;
          const bool ok = d.max_abs <= kRelativeTolerance * d.max_ref;
          std::printf("%-30s %-9s %-8s max|diff| %.3g  max|diff|/max|ort| %.3g  max rel %.3g  (memledger %.0f ms)%s\n",
                      file.c_str(), std::string(kernel_set_name(set)).c_str(), output.c_str(), d.max_abs,
                      d.max_abs / std::max(d.max_ref, 1e-30), d.max_rel, ms, ok ? "" : "  TOO FAR");
          EXPECT_TRUE(ok) << file << " (" << kernel_set_name(set) << " kernels) output " << output << ": "
                          << d.describe();
          ++compared;
        }
      }
    }
  }
  std::printf("%d outputs compared, %d model files not imported\n", compared, not_imported);
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace memledger
