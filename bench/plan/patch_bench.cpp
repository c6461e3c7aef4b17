// Patch-based execution on mobilenet_v2 (issue 13, item 4): for splits at the end of each of
// the first blocks and grids 2x2..8x8, peak-live of the patched graph under an MCU-like
// profile (256 KiB, int8 storage, NHWC, 4-byte alignment, constants just in time) and the
// extra multiply-accumulates of the recomputed halos, beside the layer-by-layer figures
// measured in the same run. Prints a Markdown table for docs/benchmarks.md.
//
//   patch_bench [MODEL.onnx] [--grids=2,4,8] [--blocks=N]   default $MEMLEDGER_CORPUS_DIR/mobilenet_v2.onnx
//
// Peak-live is given three ways: the whole plan (graph input and just-in-time constants
// included), without the graph input (MCUNetV2 counts the network without its input
// image), and without the input and the constants (both kept outside the arena, as the
// profile values inputs/constants = "external" will do). Each is split into the peak over
// the patched stage's steps and over the rest of the network.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/device/profile.h"
#include "memledger/onnx/import.h"
#include "memledger/plan/ledger.h"
#include "memledger/plan/liveness.h"
#include "memledger/plan/patch.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

DeviceProfile mcu_profile() {
  DeviceProfile p;
  p.name = "mcu256k";
  p.capacity_bytes = 262144;
  p.alignment_bytes = 4;
  p.layout = ActivationLayout::kNHWC;
  p.storage = DType::kInt8;
  p.constants = ConstantResidency::kJustInTime;
  p.source = "patch_bench";
  return p;
}

struct Peaks {
  int64_t stage = 0, rest = 0;  // the largest live bytes over the stage's steps / the others
  int64_t all() const { return std::max(stage, rest); }
};

// Live owned bytes per step, leaving out graph inputs and/or constants, split by stage.
Peaks peaks(const Liveness& live, const std::vector<int>& patch_of_step, bool inputs, bool constants) {
  const auto intervals = live.storage_intervals();
  std::vector<int64_t> at(static_cast<size_t>(std::max(live.steps(), 1)), 0);
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    if (b.alias_of) continue;
    if (!inputs && b.category == BufferCategory::kInput) continue;
    if (!constants && b.category == BufferCategory::kConstant) continue;
    for (int s = intervals[i].first; s <= intervals[i].second; ++s) at[static_cast<size_t>(s)] += b.physical_bytes;
  }
  Peaks p;
  for (int s = 0; s < live.steps(); ++s) {
    const bool in_stage = !patch_of_step.empty() && patch_of_step[static_cast<size_t>(s)] >= 0;
    int64_t& slot = in_stage ? p.stage : p.rest;
    slot = std::max(slot, at[static_cast<size_t>(s)]);
  }
  return p;
}

std::string kib(int64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / 1024.0); }

// The block a torchvision value belongs to: "features.3" of "/features/features.3/Add_output_0".
std::string block_of(const std::string& name) {
  const auto a = name.find("/features.");
  if (a == std::string::npos) return name;
  const auto b = name.find('/', a + 1);
  return name.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
}

int run(int argc, char** argv) {
  std::string model;
  std::vector<int> grids{2, 3, 4, 5, 6, 7, 8};
  size_t blocks = 8;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--grids=", 8) == 0) {
      grids.clear();
      for (const char* p = argv[i] + 8; *p;) {
        grids.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else if (std::strncmp(argv[i], "--blocks=", 9) == 0) {
      blocks = static_cast<size_t>(std::atoi(argv[i] + 9));
    } else if (argv[i][0] != '-' && model.empty()) {
      model = argv[i];
    } else {
      fail("unknown argument '{}' (expected MODEL.onnx, --grids=2,4,8, --blocks=N)", argv[i]);
    }
  }
  if (model.empty()) {
    const char* dir = std::getenv("MEMLEDGER_CORPUS_DIR");
    model = (fs::path(dir && *dir ? dir : "corpus") / "mobilenet_v2.onnx").string();
  }
  const Graph g = import_onnx_file(model);
  const DeviceProfile profile = mcu_profile();
  std::printf("model %s, profile:\n%s\n", model.c_str(), to_toml(profile).c_str());

  const Liveness base = compute_liveness(g, profile);
  const Peaks b_all = peaks(base, {}, true, true), b_noin = peaks(base, {}, false, true),
              b_ext = peaks(base, {}, false, false);
  std::printf(
      "layer by layer: peak-live %s KiB; without input %s KiB; without input and constants %s KiB; %.1f M MACs\n\n",
      kib(b_all.all()).c_str(), kib(b_noin.all()).c_str(), kib(b_ext.all()).c_str(),
      static_cast<double>(graph_macs(g)) / 1e6);

  // The last candidate of each block: where a block ends.
  const std::vector<ValueId> candidates = patch_split_candidates(g);
  std::vector<ValueId> splits;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const bool last_of_block = i + 1 == candidates.size() ||
                               block_of(g.value(candidates[i + 1]).name) != block_of(g.value(candidates[i]).name);
    if (last_of_block && block_of(g.value(candidates[i]).name) != g.value(candidates[i]).name)
      splits.push_back(candidates[i]);
    if (splits.size() == blocks) break;
  }

  std::printf(
      "| split (end of) | H×W | grid | peak-live KiB (all) | without input: stage / rest | without input and "
      "constants: stage / rest | extra MACs | rewrite + liveness ms |\n|---|---|---|---|---|---|---|---|\n");
  for (ValueId split : splits) {
    const Value& v = g.value(split);
    for (int n : grids) {
      if (n > v.shape[2] || n > v.shape[3]) continue;
      const auto t0 = std::chrono::steady_clock::now();
      const PatchedGraph p = apply_patches(g, {.split = split, .rows = n, .cols = n});
      const Liveness live = compute_liveness(p.graph, profile);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const Peaks all = peaks(live, p.patch_of_node, true, true);
      const Peaks noin = peaks(live, p.patch_of_node, false, true);
      const Peaks ext = peaks(live, p.patch_of_node, false, false);
      std::printf("| %s | %lldx%lld | %dx%d | %s | %s / %s | %s / %s | %.1f%% | %.0f |\n", block_of(v.name).c_str(),
                  static_cast<long long>(v.shape[2]), static_cast<long long>(v.shape[3]), n, n, kib(all.all()).c_str(),
                  kib(noin.stage).c_str(), kib(noin.rest).c_str(), kib(ext.stage).c_str(), kib(ext.rest).c_str(),
                  100.0 * static_cast<double>(p.extra_macs()) / static_cast<double>(p.original_macs), ms);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace memledger

int main(int argc, char** argv) {
  try {
    return memledger::run(argc, argv);
  } catch (const memledger::Error& e) {
    std::fprintf(stderr, "patch_bench: %s\n", e.what());
    return 2;
  }
}
