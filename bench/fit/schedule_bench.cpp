// Memory-aware ordering against the model's order (issue 13 item 7), side by side in one
// run: per model and device profile, peak-live in the model's order and in the
// memory-aware order, their ratio, the search's method (exact-dp proven optimal, or the
// beam heuristic), and planning time (median of --repeat runs) of the model's order
// (liveness + ledger + placement) and of the memory-aware one (the search, then the same
// planning of the order it found). Checks on every model that the memory-aware figure is
// the ledger's and never above the model order's. Prints a Markdown table for
// docs/benchmarks.md.
//
//   schedule_bench [--device=mcu,host] [--budget=S] [--repeat=N] MODEL.onnx|DIR ...
//
// A DIR stands for its *.onnx files, by name (the output of scripts/make_randwire.py or a
// corpus folder).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/fit/schedule.h"
#include "memledger/onnx/import.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = text.find(',', at);
    out.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

int run(int argc, char** argv) {
  std::vector<std::string> devices{"mcu", "host"};
  double budget = 1.0;
  int repeat = 3;
  std::vector<fs::path> models;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--device=", 0) == 0)
      devices = split(arg.substr(9));
    else if (arg.rfind("--budget=", 0) == 0)
      budget = std::stod(arg.substr(9));
    else if (arg.rfind("--repeat=", 0) == 0)
      repeat = std::max(1, std::stoi(arg.substr(9)));
    else if (fs::is_directory(arg)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::directory_iterator(arg))
        if (e.path().extension() == ".onnx" && e.path().string().find(".bn.") == std::string::npos)
          found.push_back(e.path());
      std::sort(found.begin(), found.end());
      models.insert(models.end(), found.begin(), found.end());
    } else {
      models.emplace_back(arg);
    }
  }
  if (models.empty()) {
    std::fprintf(stderr, "usage: schedule_bench [--device=mcu,host] [--budget=S] [--repeat=N] MODEL.onnx|DIR ...\n");
    return 2;
  }
  std::printf(
      "| model | nodes | device | model order peak-live | memory-aware peak-live | ratio | method | planning, model "
      "order | planning, memory-aware |\n|---|---:|---|---:|---:|---:|---|---:|---:|\n");
  int failures = 0;
  for (const fs::path& path : models) {
    Graph graph;
    try {
      graph = import_onnx_file(path.string());
    } catch (const Error& e) {
      std::printf("| %s | – | – | does not import: %s | | | | | |\n", path.stem().c_str(), e.what());
      continue;
    }
    for (const std::string& device : devices) {
      const DeviceProfile profile = resolve_device(device);
      const PlacementOptions placement{.algorithm = allocate::Algorithm::kGreedy};
      std::vector<double> model_times, memory_times;
      ScheduleResult result;
      int64_t model_peak = 0, memory_peak = 0;
      for (int r = 0; r < repeat; ++r) {
        auto t0 = Clock::now();
        const MemoryPlan model_plan = plan_memory(graph, profile, {}, placement);
        model_times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        model_peak = model_plan.ledger.peak_live_bytes;
        t0 = Clock::now();
        result = memory_aware_schedule(graph, profile, {.time_budget_seconds = budget});
        Graph reordered = graph;
        reordered.set_order(result.order);
        const MemoryPlan memory_plan = plan_memory(reordered, profile, {}, placement);
        memory_times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        memory_peak = memory_plan.ledger.peak_live_bytes;
      }
      const bool ok = memory_peak == result.peak_live_bytes && result.model_order_peak_bytes == model_peak &&
                      memory_peak <= model_peak;
      failures += ok ? 0 : 1;
      std::printf("| %s | %zu | %s | %lld | %lld | %.2fx | %s%s%s | %.3f s | %.3f s |\n", path.stem().c_str(),
                  graph.order().size(), device.c_str(), static_cast<long long>(model_peak),
                  static_cast<long long>(memory_peak),
                  static_cast<double>(model_peak) / static_cast<double>(std::max<int64_t>(memory_peak, 1)),
                  result.method.c_str(), result.optimal ? ", optimal" : "", ok ? "" : " **MISMATCH**",
                  median(model_times), median(memory_times));
      std::fflush(stdout);
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace memledger

int main(int argc, char** argv) {
  try {
    return memledger::run(argc, argv);
  } catch (const memledger::Error& e) {
    std::fprintf(stderr, "schedule_bench: %s\n", e.what());
    return 2;
  }
}
