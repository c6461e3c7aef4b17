// `memledger run MODEL.tflite` against the outside reference on every shared TFLite model:
// Arm NN 20.08's CpuRef backend (scripts/tflite/armnn_reference.py) on the same seeded
// inputs, outputs equal within one unit (Arm NN requantizes through float, TFLite in fixed
// point), the number of elements that differ at all printed. The models Arm NN refuses are
// named with its error: person_detect runs on a copy whose 1-D biases name axis 0 (same
// values); keyword_scrambled (SVDF) is compared with TensorFlow Lite's own interpreter
// instead (tflite_runtime_test.cpp). And `run --arena` gives
// the plain run's outputs bit for bit on every model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "memledger/onnx/tensor_file.h"
#include "tflite/shell_commands.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> model_path(const std::string& name) {
  for (const fs::path& dir : {fs::path(MEMLEDGER_SOURCE_DIR) / "tests/data/tflite",
                              fs::path(MEMLEDGER_SOURCE_DIR) / "../shared/models/tflite",
                              fs::path(MEMLEDGER_SOURCE_DIR) / "../../shared/models/tflite"})
    if (fs::exists(dir / name)) return dir / name;
  return std::nullopt;
}

using testing::read_text;
using testing::sh_quote;
using testing::shell;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("memledger_tflite_kernels_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// What the reference script made of a model: exit status, its manifest, its messages.
struct Reference {
  int status = -1;
  nlohmann::json manifest;
  std::string log;
};
Reference armnn(const fs::path& model, const fs::path& dir, const std::string& flags = "") {
  Reference r;
  const fs::path script = fs::path(MEMLEDGER_SOURCE_DIR) / "scripts/tflite/armnn_reference.py";
  r.status = shell(
      "/usr/bin/python3 " + sh_quote(script) + " " + sh_quote(model) + " " + sh_quote(dir / "armnn") + " " + flags,
      dir / "armnn.log");
  r.log = read_text(dir / "armnn.log");
  if (fs::exists(dir / "armnn/manifest.json"))
    r.manifest = nlohmann::json::parse(read_text(dir / "armnn/manifest.json"));
  return r;
}

// memledger run on the manifest's inputs; the outputs' folder.
fs::path memledger_run(const fs::path& model, const nlohmann::json& manifest, const fs::path& dir,
                       const std::string& mode) {
  std::string command = std::string(MEMLEDGER_CLI) + " run " + sh_quote(model);
  for (const auto& in : manifest["inputs"])
    command += " --input " + sh_quote(in["name"].get<std::string>() + "=" + in["file"].get<std::string>());
  std::string tag = mode;
  std::replace(tag.begin(), tag.end(), ' ', '_');
  const fs::path out = dir / ("memledger" + tag);
  fs::create_directories(out);
  command += " --output-dir " + sh_quote(out) + " --output-format npy";
  if (!mode.empty()) command += " " + mode;
  const int status = shell(command, dir / ("run" + tag + ".log"));
  EXPECT_EQ(status, 0) << command << "\n" << read_text(dir / ("run" + tag + ".log"));
  return out;
}

void skip_unless_ready(const std::optional<fs::path>& model) {
  if (!model) GTEST_SKIP() << "model file not found";
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
}

class ArmnnModels : public ::testing::TestWithParam<const char*> {};

TEST_P(ArmnnModels, OutputsWithinOneUnitOfArmNN) {
  const auto model = model_path(GetParam());
  skip_unless_ready(model);
  if (IsSkipped()) return;
  const fs::path dir = scratch(fs::path(GetParam()).stem().string());
  // person_detect's depthwise biases name axis 3 for their per-axis quantization, which Arm
  // NN refuses; the script's --bias-axis-zero copy names axis 0 (the values are the same).
  const bool patch = std::string(GetParam()) == "person_detect.tflite";
  const Reference ref = armnn(*model, dir, patch ? "--bias-axis-zero" : "");
  if (ref.status == 2 || ref.log.find("None of the preferred backends") != std::string::npos)
    GTEST_SKIP() << "Arm NN is not usable here: " << ref.log;
  ASSERT_EQ(ref.status, 0) << ref.log;
  ASSERT_TRUE(ref.manifest.is_object()) << "no manifest.json: " << ref.log;
  if (patch) {
    EXPECT_EQ(ref.manifest.value("bias_axis_zero", nlohmann::json::array()).size(), 14u) << ref.log;
  }
  const fs::path out = memledger_run(*model, ref.manifest, dir, "");
  for (const auto& o : ref.manifest["outputs"]) {
    const Tensor want = read_tensor_file(o["file"].get<std::string>()).tensor;
    // `run` names an output's file by the output's name with anything but [A-Za-z0-9._-] as '_'.
    std::string file = o["name"].get<std::string>();
    for (char& c : file)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
    const Tensor got = read_tensor_file((out / (file + ".npy")).string()).tensor;
    ASSERT_EQ(got.dtype(), want.dtype());
    ASSERT_EQ(got.shape(), want.shape());
    int64_t differ = 0;
    double worst = 0;
    for (int64_t i = 0; i < got.elements(); ++i) {
      const double d = std::abs(got.element_as_double(i) - want.element_as_double(i));
      differ += d != 0;
      worst = std::max(worst, d);
    }
    EXPECT_LE(worst, 1.0) << o["name"];
    std::cout << GetParam() << " output '" << o["name"].get<std::string>() << "': " << differ << " of "
              << got.elements() << " elements differ from Arm NN, by at most " << worst << "\n";
  }
}
INSTANTIATE_TEST_SUITE_P(Tflite, ArmnnModels,
                         ::testing::Values("hello_world_int8.tflite", "micro_speech_quantized.tflite",
                                           "person_detect.tflite"));

// The models Arm NN 20.08 cannot run, with the error it gives.
TEST(TfliteArmnn, RefusedModelsAreNamed) {
  const std::pair<const char*, const char*> refused[] = {
      {"person_detect.tflite", "Quantization dimension for per-axis quantization expected to be 0 on tensor bias"},
      {"keyword_scrambled.tflite", "Operator not supported"}};
  for (const auto& [name, message] : refused) {
    const auto model = model_path(name);
    if (!model) continue;
    const Reference ref = armnn(*model, scratch(fs::path(name).stem().string() + "_refused"));
    if (ref.status == 2) GTEST_SKIP() << "Arm NN is not usable here: " << ref.log;
    EXPECT_EQ(ref.status, 3) << name << ": " << ref.log;
    ASSERT_TRUE(ref.manifest.is_object()) << name << ": no manifest.json: " << ref.log;
    EXPECT_NE(ref.manifest.value("refused", "").find(message), std::string::npos) << name << ": " << ref.log;
  }
}

class ArenaModels : public ::testing::TestWithParam<const char*> {};

// Bit-identical outputs of the plain run and the run inside the planned arena, on
// memledger's own seeded inputs.
TEST_P(ArenaModels, ArenaRunIsBitIdentical) {
  const auto model = model_path(GetParam());
  skip_unless_ready(model);
  if (IsSkipped()) return;
  const fs::path dir = scratch(fs::path(GetParam()).stem().string() + "_arena");
  const nlohmann::json no_inputs = {{"inputs", nlohmann::json::array()}};
  const fs::path plain = memledger_run(*model, no_inputs, dir, "--seed 7");
  const fs::path arena = memledger_run(*model, no_inputs, dir, "--seed 7 --arena");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(plain)) {
    ++files;
    const Tensor a = read_tensor_file(entry.path().string()).tensor;
    const Tensor b = read_tensor_file((arena / entry.path().filename()).string()).tensor;
    ASSERT_EQ(a.shape(), b.shape());
    EXPECT_TRUE(std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin(), b.bytes().end()))
        << GetParam() << " " << entry.path().filename();
  }
  EXPECT_GT(files, 0);
}
INSTANTIATE_TEST_SUITE_P(Tflite, ArenaModels,
                         ::testing::Values("hello_world_int8.tflite", "micro_speech_quantized.tflite",
                                           "person_detect.tflite", "keyword_scrambled.tflite"));

}  // namespace
}  // namespace memledger
