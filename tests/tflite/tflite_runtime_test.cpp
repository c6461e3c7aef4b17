// `memledger run MODEL.tflite` against TensorFlow Lite's own interpreter
// (tests/tflite_runtime/run_tflite.cjs: its web API in WebAssembly, under Node), value by
// value: every tensor an operator writes is exposed as a graph output first
// (scripts/tflite/expose_tensors.py), both runtimes run that copy on the interpreter's seeded
// inputs, and every output is compared. keyword_scrambled, which Arm NN refuses (SVDF), is
// bit-identical in every tensor, its seven SVDF outputs included (the time sums wrap in int32
// as TFLite's do). hello_world_int8 and micro_speech_quantized are within one unit: the
// interpreter hands int8 convolutions and fully connected layers to XNNPACK, which rounds
// its requantization in float. person_detect is left to Arm NN (kernels_armnn_test.cpp):
// there XNNPACK's units compound through 28 layers.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "corpus.h"
#include "memledger/onnx/tensor_file.h"
#include "tflite/shell_commands.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

using testing::read_text;
using testing::sh_quote;
using testing::shell;

std::string file_stem(std::string name) {  // as `run --output-dir` names an output's file
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return name;
}

struct Case {
  const char* model;
  int seeds;
  double tolerance;  // in units of the outputs' integers
};

class TfliteRuntime : public ::testing::TestWithParam<Case> {};

TEST_P(TfliteRuntime, EveryTensorAsTfliteComputesIt) {
  const Case c = GetParam();
  const fs::path model = fs::path(MEMLEDGER_SOURCE_DIR) / "tests/data/tflite" / c.model;
  ASSERT_TRUE(fs::exists(model)) << model;
  const fs::path runtime = fs::path(MEMLEDGER_SOURCE_DIR) / "tests/tflite_runtime";
  if (!fs::exists(runtime / "node_modules/@tensorflow/tfjs-tflite"))
    ML_SKIP_OR_FAIL("@tensorflow/tfjs-tflite missing: cd tests/tflite_runtime && npm ci --ignore-scripts");
  if (std::system("node --version > /dev/null 2>&1") != 0) ML_SKIP_OR_FAIL("node is not installed");
  if (std::system("flatc --version > /dev/null 2>&1") != 0) ML_SKIP_OR_FAIL("flatc is not installed");

  const fs::path dir = fs::temp_directory_path() / ("memledger_tflite_runtime_" + fs::path(c.model).stem().string());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path exposed = dir / "exposed.tflite";
  ASSERT_EQ(shell("/usr/bin/python3 " + sh_quote(fs::path(MEMLEDGER_SOURCE_DIR) / "scripts/tflite/expose_tensors.py") +
                      " " + sh_quote(model) + " " + sh_quote(exposed),
                  dir / "expose.log"),
            0)
      << read_text(dir / "expose.log");

  int64_t elements = 0, differ = 0, outputs = 0;
  double worst = 0;
  for (int seed = 1; seed <= c.seeds; ++seed) {
    const fs::path ref = dir / ("tflite" + std::to_string(seed));
    ASSERT_EQ(shell("node " + sh_quote(runtime / "run_tflite.cjs") + " " + sh_quote(exposed) + " " + sh_quote(ref) +
                        " --seed " + std::to_string(seed),
                    dir / "tflite.log"),
              0)
        << read_text(dir / "tflite.log");
    const nlohmann::json manifest = nlohmann::json::parse(read_text(ref / "manifest.json"));
    std::string command = std::string(MEMLEDGER_CLI) + " run " + sh_quote(exposed);
    for (const auto& in : manifest["inputs"])
      command += " --input " + sh_quote(in["name"].get<std::string>() + "=" + in["file"].get<std::string>());
    const fs::path ours = dir / ("memledger" + std::to_string(seed));
    command += " --output-dir " + sh_quote(ours);
    ASSERT_EQ(shell(command, dir / "run.log"), 0) << command << "\n" << read_text(dir / "run.log");
    ASSERT_GT(manifest["outputs"].size(), 1u);  // the intermediate tensors, not only the model's outputs
    for (const auto& o : manifest["outputs"]) {
      const std::string name = o["name"].get<std::string>();
      const Tensor want = read_tensor_file(o["file"].get<std::string>()).tensor;
      const Tensor got = read_tensor_file((ours / (file_stem(name) + ".npy")).string()).tensor;
      ASSERT_EQ(got.dtype(), want.dtype()) << name;
      ASSERT_EQ(got.shape(), want.shape()) << name;
      for (int64_t i = 0; i < got.elements(); ++i) {
        const double d = std::abs(got.element_as_double(i) - want.element_as_double(i));
        EXPECT_LE(d, c.tolerance) << name << " element " << i << " (seed " << seed << ")";
        differ += d != 0;
        worst = std::max(worst, d);
      }
      elements += got.elements();
      ++outputs;
    }
  }
  std::cout << c.model << ": " << outputs << " tensors over " << c.seeds << " seeds, " << differ << " of " << elements
            << " elements differ from TensorFlow Lite, by at most " << worst << "\n";
}
INSTANTIATE_TEST_SUITE_P(Tflite, TfliteRuntime,
                         ::testing::Values(Case{"keyword_scrambled.tflite", 3, 0.0},
                                           Case{"hello_world_int8.tflite", 2, 1.0},
                                           Case{"micro_speech_quantized.tflite", 2, 1.0}),
                         [](const auto& param_info) { return fs::path(param_info.param.model).stem().string(); });

}  // namespace
}  // namespace memledger
