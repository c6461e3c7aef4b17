// Patch-based execution on mobilenet_v2 (issue 13, item 4): for splits at the end of each of
// the first blocks and grids 2x2..8x8, peak-live of the patched graph under an MCU-like
// profile (256 KiB, int8 storage, NHWC, 4-byte alignment, constants just in time) and the
// extra multiply-accumulates of the recomputed halos, beside the layer-by-layer figures
// measured in the same run. Prints a Markdown table for docs/benchmarks.md.
//
//   patch_bench [MODEL.onnx] [--grids=2,4,8] [--blocks=N] [--time] [--explain=BLOCK,N]   default
//   $MEMLEDGER_CORPUS_DIR/mobilenet_v2.onnx
//
// Peak-live leaves out the graph input (MCUNetV2 counts the network without its input
// image) and the constants (kept outside the arena, as the profile values
// inputs/constants = "external" do), and is split into the peak over the patched stage's
// steps and over the rest of the network; the stage's peak is also given with the
// constants just in time (the stage's weights are then live through all its patches).
// --time adds the interpreter's run time (median of 5, layer by layer measured in the same
// run); --explain lists what is live at the patched stage's peak for one split and grid.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/device/profile.h"
#include "memledger/exec/interpreter.h"
#include "memledger/fit/patch.h"
#include "memledger/onnx/import.h"
#include "memledger/plan/ledger.h"
#include "memledger/plan/liveness.h"

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

// Median wall time of five interpreter runs.
double median_run_ms(const Graph& g, const std::vector<Tensor>& inputs) {
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run_graph(g, inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[2];
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
  std::string explain_block;
  int explain_grid = 0;
  bool time_runs = false;
  std::vector<std::string> nested;  // outer block, outer grid, inner block, inner grid
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
    } else if (std::strncmp(argv[i], "--nested=", 9) == 0) {
      nested.clear();
      std::string arg = argv[i] + 9;
      for (size_t at = 0; at <= arg.size();) {
        const size_t comma = std::min(arg.find(',', at), arg.size());
        nested.push_back(arg.substr(at, comma - at));
        at = comma + 1;
      }
      if (nested.size() % 4 != 0)
        fail("--nested=OUTER_BLOCK,GRID,INNER_BLOCK,GRID[,...] (e.g. features.6,2,features.3,3x2)");
    } else if (std::strcmp(argv[i], "--time") == 0) {
      time_runs = true;
    } else if (std::strncmp(argv[i], "--explain=", 10) == 0) {
      const std::string arg = argv[i] + 10;
      const auto comma = arg.find(',');
      if (comma == std::string::npos) fail("--explain=BLOCK,N (e.g. features.4,4)");
      explain_block = arg.substr(0, comma);
      explain_grid = std::atoi(arg.c_str() + comma + 1);
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
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ValueId> candidates = patch_split_candidates(g);
  const double candidates_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "layer by layer: peak-live %s KiB; without input %s KiB; without input and constants %s KiB; %.1f M MACs\n\n",
      kib(b_all.all()).c_str(), kib(b_noin.all()).c_str(), kib(b_ext.all()).c_str(),
      static_cast<double>(graph_macs(g)) / 1e6);

  std::printf("%zu split candidates (%.1f ms)\n\n", candidates.size(), candidates_ms);
  // The last candidate of each block: where a block ends.
  std::vector<ValueId> splits;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const bool last_of_block = i + 1 == candidates.size() ||
                               block_of(g.value(candidates[i + 1]).name) != block_of(g.value(candidates[i]).name);
    if (last_of_block && block_of(g.value(candidates[i]).name) != g.value(candidates[i]).name)
      splits.push_back(candidates[i]);
    if (splits.size() == blocks) break;
  }

  std::optional<std::tuple<Graph, Liveness, std::vector<int>>> explain;
  const std::vector<Tensor> inputs = random_inputs(g, 1);
  std::printf(
      "| split (end of) | H×W | grid | stage KiB | rest KiB | peak-live KiB | stage KiB, constants just in time | "
      "extra MACs | rewrite + liveness ms | run ms (layer by layer %s) |\n|---|---|---|---|---|---|---|---|---|---|\n",
      time_runs ? fmt::format("{:.0f}", median_run_ms(g, inputs)).c_str() : "not timed");
  for (ValueId split : splits) {
    const Value& v = g.value(split);
    for (int n : grids) {
      if (n > v.shape[2] || n > v.shape[3]) continue;
      const auto t0 = std::chrono::steady_clock::now();
      const PatchedGraph p = apply_patches(g, {.split = split, .rows = n, .cols = n});
      const Liveness live = compute_liveness(p.graph, profile);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const Peaks noin = peaks(live, p.patch_of_node, false, true);
      const Peaks ext = peaks(live, p.patch_of_node, false, false);
      const std::string run_ms = time_runs ? fmt::format("{:.0f}", median_run_ms(p.graph, inputs)) : "";
      std::printf("| %s | %lldx%lld | %dx%d | %s | %s | **%s** | %s | %.1f%% | %.0f | %s |\n", block_of(v.name).c_str(),
                  static_cast<long long>(v.shape[2]), static_cast<long long>(v.shape[3]), n, n, kib(ext.stage).c_str(),
                  kib(ext.rest).c_str(), kib(ext.all()).c_str(), kib(noin.stage).c_str(),
                  100.0 * static_cast<double>(p.extra_macs()) / static_cast<double>(p.original_macs), ms,
                  run_ms.c_str());
      std::fflush(stdout);
      if (block_of(v.name) == explain_block && n == explain_grid) explain.emplace(p.graph, live, p.patch_of_node);
    }
  }
  // Patches of patches: the outer stage's patches each run their own stage up to the inner
  // block's end as an inner grid.
  for (size_t k = 0; k + 3 < nested.size(); k += 4) {
    auto end_of = [&](const std::string& block) {
      for (ValueId v : splits)
        if (block_of(g.value(v).name) == block) return v;
      fail("no split at the end of '{}'", block);
    };
    const ValueId outer = end_of(nested[k]), inner = end_of(nested[k + 2]);
    // "3" is 3x3, "2x1" two rows of one column.
    auto grid = [](const std::string& text) {
      const auto x = text.find('x');
      const int rows = std::atoi(text.c_str());
      return std::pair<int, int>{rows, x == std::string::npos ? rows : std::atoi(text.c_str() + x + 1)};
    };
    const auto [n, n2] = grid(nested[k + 1]);
    const auto [m, m2] = grid(nested[k + 3]);
    const auto t0 = std::chrono::steady_clock::now();
    const PatchedGraph p =
        apply_nested_patches(g, {.split = outer, .rows = n, .cols = n2}, {.split = inner, .rows = m, .cols = m2});
    const std::vector<int>& in_stage = p.patch_of_node;
    const Liveness live = compute_liveness(p.graph, profile);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const Peaks noin = peaks(live, in_stage, false, true), ext = peaks(live, in_stage, false, false);
    const std::string run_ms = time_runs ? fmt::format("{:.0f}", median_run_ms(p.graph, inputs)) : "";
    std::printf(
        "| %s %dx%d, in each patch %s %dx%d | %lldx%lld | %dx%d · %dx%d | %s | %s | **%s** | %s | %.1f%% | %.0f | %s "
        "|\n",
        nested[k].c_str(), n, n2, nested[k + 2].c_str(), m, m2, static_cast<long long>(g.value(outer).shape[2]),
        static_cast<long long>(g.value(outer).shape[3]), n, n2, m, m2, kib(ext.stage).c_str(), kib(ext.rest).c_str(),
        kib(ext.all()).c_str(), kib(noin.stage).c_str(),
        100.0 * static_cast<double>(p.extra_macs()) / static_cast<double>(p.original_macs), ms, run_ms.c_str());
  }
  if (explain) {
    // What is live at the patched stage's peak (inputs and constants left out, as in the last column).
    const auto& [graph, live, patch_of] = *explain;
    const auto intervals = live.storage_intervals();
    int best_step = 0;
    int64_t best = -1;
    for (int s = 0; s < live.steps(); ++s) {
      if (patch_of[static_cast<size_t>(s)] < 0) continue;
      int64_t bytes = 0;
      for (size_t i = 0; i < live.buffers.size(); ++i) {
        const LiveBuffer& b = live.buffers[i];
        if (b.alias_of || b.category == BufferCategory::kInput || b.category == BufferCategory::kConstant) continue;
        if (intervals[i].first <= s && s <= intervals[i].second) bytes += b.physical_bytes;
      }
      if (bytes > best) best = bytes, best_step = s;
    }
    std::printf("\npeak %s KiB at step %d (%s):\n", kib(best).c_str(), best_step,
                graph.node(live.schedule[static_cast<size_t>(best_step)]).label().c_str());
    for (size_t i = 0; i < live.buffers.size(); ++i) {
      const LiveBuffer& b = live.buffers[i];
      if (b.alias_of || b.category == BufferCategory::kInput || b.category == BufferCategory::kConstant) continue;
      if (intervals[i].first <= best_step && best_step <= intervals[i].second)
        std::printf("  %8s KiB  %s\n", kib(b.physical_bytes).c_str(), b.name.c_str());
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
