// NPU mode on the torchvision corpus (scripts/corpus/) under tests/data/device/npu256k.toml
// (256 KiB local, int8). Needs the corpus (tests/corpus.h says where and when it is skipped);
// MEMLEDGER_SIM_MODELS (comma-separated) overrides the default models. Prints one line per
// model with its traffic ratio (the figures of docs/npu-mode.md); MEMLEDGER_SIM_REPORT_DIR
// also gets each model's full text report.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "corpus.h"
#include "memledger/device/profile.h"
#include "memledger/onnx/import.h"
#include "memledger/plan/allocate/validate.h"
#include "memledger/sim/sim_report.h"
#include "memledger/sim/simulate.h"

namespace memledger::sim {
namespace {

std::vector<std::string> corpus_models() {
  const char* list = std::getenv("MEMLEDGER_SIM_MODELS");
  std::string text = list ? list : "resnet18,mobilenet_v2,squeezenet1_0,efficientnet_b0,shufflenet_v2_x1_0,mnasnet0_5";
  std::vector<std::string> names;
  std::stringstream in(text);
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
}

TEST(CorpusSim, EveryModelReportsItsTrafficRatio) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  const DeviceProfile npu = load_device_profile_file(MEMLEDGER_SOURCE_DIR "/tests/data/device/npu256k.toml");
  int ran = 0;
  for (const std::string& name : corpus_models()) {
    for (const std::string suffix : {".onnx", ".bn.onnx"}) {
      const std::filesystem::path path = std::filesystem::path(dir) / (name + suffix);
      if (!std::filesystem::exists(path)) continue;
      SCOPED_TRACE(path.string());
      const Graph graph = import_onnx_file(path.string());
      ++ran;
      for (const bool workspace : {true, false}) {
        const SimReport r = simulate(graph, npu, {.kernel_workspace = workspace});
        if (const char* out = std::getenv("MEMLEDGER_SIM_REPORT_DIR"))
          std::ofstream(std::filesystem::path(out) /
                        (path.filename().string() + (workspace ? "" : ".no-workspace") + ".sim.txt"))
              << sim_report_text(r);
        EXPECT_GE(r.bytes_ratio(), 1.0);
        EXPECT_TRUE(std::isfinite(r.cycles_ratio()));
        EXPECT_TRUE(r.fits_external);
        int over = 0;
        for (const auto& s : r.operators) {
          EXPECT_FALSE(allocate::find_violation(s.local, s.local_plan).has_value()) << s.node;
          over += s.fits ? 0 : 1;
        }
        std::printf(
            "%-28s %-12s ops %4zu  generic %3d  ideal %11lld B  moved %11lld B  ×%.3f bytes  ×%.3f cycles  "
            "weights ×%.3f  local peak %6lld B%s\n",
            path.filename().c_str(), workspace ? "workspace" : "no workspace", r.operators.size(), r.generic_operators,
            static_cast<long long>(r.ideal.bytes), static_cast<long long>(r.total().bytes), r.bytes_ratio(),
            r.cycles_ratio(),
            r.weight_ideal_bytes ? static_cast<double>(r.weights.bytes) / static_cast<double>(r.weight_ideal_bytes)
                                 : 1.0,
            static_cast<long long>(r.local_peak_bytes),
            over ? (" (" + std::to_string(over) + " operators do not fit)").c_str() : "");
      }
    }
  }
  if (ran == 0) GTEST_SKIP() << "none of the models is in " << dir;
}

}  // namespace
}  // namespace memledger::sim
