// Planning on the corpus (DESIGN.md §8): per model, the placed arena ÷ peak-live under the
// host profile (target 1.000) and peak-live with in-place reuse ÷ without (target ≤ 0.70 on
// CNNs), both measured in this run; with --arena each plan is also run inside its arena
// (exec/arena_run) and must stay bit-identical. Prints a Markdown table for
// docs/benchmarks.md.
//
//   corpus_plan_bench [--arena] [--budget=S]     corpus from $MEMLEDGER_CORPUS_DIR or ./corpus
//
// Peak-live is given twice: the whole plan (the host keeps weights resident, so they are
// in every step) and activations only (inputs, outputs, activations, workspaces: what
// in-place reuse can change; the weights are the same with and without it), and once
// more without kernel workspaces: the reference Conv's im2col workspace is the largest
// buffer at the peak of most CNNs, and in-place reuse cannot touch it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/onnx/import.h"
#include "memledger/plan/memory_plan.h"
#include "terminal/progress.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

// The largest sum of owned bytes live at one step, constants (and, if asked, kernel
// workspaces) left out.
int64_t activation_peak(const Liveness& live, bool workspaces = true) {
  const auto intervals = live.storage_intervals();
  std::vector<int64_t> at(static_cast<size_t>(std::max(live.steps(), 1)), 0);
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    if (b.alias_of || b.category == BufferCategory::kConstant) continue;
    if (!workspaces && b.category == BufferCategory::kWorkspace) continue;
    for (int s = intervals[i].first; s <= intervals[i].second; ++s) at[static_cast<size_t>(s)] += b.physical_bytes;
  }
  return *std::max_element(at.begin(), at.end());
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

int run(int argc, char** argv) {
  bool arena = false;
  double budget = 2.0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--arena") == 0)
      arena = true;
    else if (std::strncmp(argv[i], "--budget=", 9) == 0)
      budget = std::atof(argv[i] + 9);
    else
      fail("unknown argument '{}' (expected --arena, --budget=S)", argv[i]);
  }
  const char* env = std::getenv("MEMLEDGER_CORPUS_DIR");
  const fs::path dir = env ? fs::path(env) : fs::path("corpus");
  std::vector<fs::path> models;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".onnx") models.push_back(entry.path());
  if (models.empty()) fail("no .onnx models in {}", dir.string());
  std::sort(models.begin(), models.end());

  const DeviceProfile host = builtin_profile("host");
  std::printf(
      "| model | nodes | arena | peak-live | arena ÷ peak-live | placement | plan s | activations peak, in-place | "
      "without | in-place ÷ without | same, no workspaces |%s\n",
      arena ? " arena run |" : "");
  std::printf("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|%s\n", arena ? "---|" : "");
  int failures = 0;
  Progress progress("corpus", static_cast<int64_t>(models.size()));
  for (const fs::path& path : models) {
    progress.update(&path - models.data(), path.filename().string());
    const Graph g = import_onnx_file(path.string());
    const auto start = std::chrono::steady_clock::now();
    const MemoryPlan plan = plan_memory(g, host, {}, {.time_budget_seconds = budget});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const Liveness without = compute_liveness(g, host, {.in_place = false});
    const int64_t act_with = activation_peak(plan.liveness), act_without = activation_peak(without);
    const int64_t bare_with = activation_peak(plan.liveness, false), bare_without = activation_peak(without, false);
    const double ratio = static_cast<double>(plan.arena_bytes) / static_cast<double>(plan.ledger.peak_live_bytes);
    std::string verdict;
    if (arena) {
      const ArenaRunReport r = run_in_arena(g, plan, random_inputs(g, 0));
      verdict = r.clean() ? " bit-identical, 0 violations |"
                          : fmt::format(" {} violations, {} outputs differ |", r.violations.size(),
                                        r.differing_outputs.size());
      failures += r.clean() ? 0 : 1;
    }
    std::printf(
        "| %s | %zu | %.2f MiB | %.2f MiB | %.3f | %s%s | %.2f | %.2f MiB | %.2f MiB | %.3f | %.2f / %.2f MiB = %.3f "
        "|%s\n",
        path.filename().c_str(), g.order().size(), mib(plan.arena_bytes), mib(plan.ledger.peak_live_bytes), ratio,
        plan.algorithm.c_str(), plan.optimal ? ", optimal" : "", seconds, mib(act_with), mib(act_without),
        static_cast<double>(act_with) / static_cast<double>(act_without), mib(bare_with), mib(bare_without),
        static_cast<double>(bare_with) / static_cast<double>(bare_without), verdict.c_str());
    std::fflush(stdout);
  }
  progress.finish();
  return failures == 0 ? 0 : 4;
}

}  // namespace
}  // namespace memledger

int main(int argc, char** argv) {
  try {
    return memledger::run(argc, argv);
  } catch (const memledger::Error& e) {
    std::fprintf(stderr, "corpus_plan_bench: %s\n", e.what());
    return 2;
  }
}
