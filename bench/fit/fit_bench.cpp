// Making models fit an MCU (issue 13, item 7): per model, `memledger fit` under the built-in
// `mcu` profile (256 KiB, int8 storage, NHWC, 4-byte alignment, constants and the input
// image outside the arena) with every step measured (FitOptions::all_steps): peak-live layer
// by layer (the baseline, in the same run), with the memory-aware order, with the in-place
// rules, with patching, with patches of patches; the extra multiply-accumulates and the
// planning time of each; then
// the fitted plan is run inside its arena (with the model's dtypes) against the ordinary
// run on the reference kernels (the fit's plan uses their contracts). Prints Markdown tables
// for docs/benchmarks.md.
//
//   fit_bench [--capacity=B] [--no-arena] MODEL.onnx...
//
// With several files of one model at different input sides (export_torchvision.py
// --input-side), the rows are the resolution sweep.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/fit/fit.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

std::string kib(int64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / 1024.0); }

const FitStep* step_of(const FitResult& fit, FitStepKind kind) {
  for (const FitStep& s : fit.steps)
    if (s.kind == kind) return &s;
  return nullptr;
}

int run(int argc, char** argv) {
  std::vector<std::string> models;
  int64_t capacity = 0;
  bool arena = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--capacity=", 11) == 0)
      capacity = std::atoll(argv[i] + 11);
    else if (std::strcmp(argv[i], "--no-arena") == 0)
      arena = false;
    else if (argv[i][0] == '-')
      fail("unknown argument '{}' (expected --capacity=B, --no-arena, MODEL.onnx...)", argv[i]);
    else
      models.emplace_back(argv[i]);
  }
  if (models.empty()) fail("no model given");
  DeviceProfile profile = builtin_profile("mcu");
  if (capacity > 0) profile.capacity_bytes = capacity;

  std::printf("profile %s: capacity %lld B, int8, NHWC, alignment 4, constants and inputs external\n\n",
              profile.name.c_str(), static_cast<long long>(profile.capacity_bytes));
  std::printf(
      "| model | input | MACs | layer by layer | memory-aware order | + in-place | + patches | + patches of patches "
      "| patch grid | extra MACs | fits | planning (order / in-place / patches / nested) | arena run |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|---|---|\n");
  for (const std::string& path : models) {
    const Graph graph = import_onnx_file(path);
    const Shape& input = graph.value(graph.inputs().at(0)).shape;
    const auto start = std::chrono::steady_clock::now();
    const FitResult fit = fit_model(graph, profile, {.all_steps = true});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const FitStep* base = step_of(fit, FitStepKind::kLayerByLayer);
    const FitStep* order = step_of(fit, FitStepKind::kMemoryOrder);
    const FitStep* in_place = step_of(fit, FitStepKind::kInPlace);
    const FitStep* patches = step_of(fit, FitStepKind::kPatches);
    const FitStep* nested = step_of(fit, FitStepKind::kNestedPatches);
    std::string arena_text = "not run";
    if (arena) {
      const MemoryPlan plan = fit_arena_plan(fit, profile);
      const ArenaRunReport r =
          run_in_arena(fit.graph, plan, random_inputs(graph, 1),
                       run_graph(graph, random_inputs(graph, 1), {.kernels = KernelSet::kReference}));
      arena_text = r.clean() ? fmt::format("bit-identical, {} violations", r.violations.size())
                             : fmt::format("FAILED: {} violations, {} outputs differ {}", r.violations.size(),
                                           r.differing_outputs.size(), r.failure);
      if (!in_place_differences(fit.plan, plan).empty()) arena_text += ", in-place decisions differ";
    }
    auto peak = [](const FitStep* s) { return s ? kib(s->peak_live_bytes) : std::string("–"); };
    auto secs = [](const FitStep* s) { return s ? fmt::format("{:.2f}", s->planning_seconds) : std::string("–"); };
    std::string grid =
        fit.patches ? fmt::format("{}x{} to {}", fit.patches->spec.rows, fit.patches->spec.cols, fit.patches->split)
                    : (patches ? patches->detail : "–");
    if (fit.patches && fit.patches->inner_spec)
      grid += fmt::format(", in each {}x{} to {}", fit.patches->inner_spec->rows, fit.patches->inner_spec->cols,
                          fit.patches->inner_split);
    const int64_t extra = fit.patches ? fit.patches->patched_macs - fit.patches->original_macs : 0;
    std::printf(
        "| %s | %s | %.0f M | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s / %s s (%.1f s in all) | %s |\n",
        fs::path(path).stem().c_str(), shape_to_string(input).c_str(), static_cast<double>(fit.model_macs) / 1e6,
        peak(base).c_str(), peak(order).c_str(), peak(in_place).c_str(), peak(patches).c_str(), peak(nested).c_str(),
        grid.c_str(),
        fit.model_macs > 0
            ? fmt::format("{:+.1f}%", 100.0 * static_cast<double>(extra) / static_cast<double>(fit.model_macs)).c_str()
            : "–",
        fit.fits ? fmt::format("yes ({} KiB)", kib(fit.plan.arena_bytes)).c_str()
                 : fmt::format("no ({} KiB)", kib(fit.plan.arena_bytes)).c_str(),
        secs(order).c_str(), secs(in_place).c_str(), secs(patches).c_str(), secs(nested).c_str(), seconds,
        arena_text.c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace memledger

int main(int argc, char** argv) {
  try {
    return memledger::run(argc, argv);
  } catch (const memledger::Error& e) {
    std::fprintf(stderr, "fit_bench: %s\n", e.what());
    return 2;
  }
}
