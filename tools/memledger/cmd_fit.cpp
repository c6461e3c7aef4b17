// `memledger fit MODEL --device D`: the cheapest changes that make the model fit the device
// (fit/fit.h) — order, in-place rules, patches — each step's figures, and the plan reached;
// exit 3 when even the best does not fit. Writes the final plan as JSON, HTML and a C header.
#include <fmt/format.h>

#include "commands.h"
#include "device_option.h"
#include "fit_options.h"
#include "flag_errors.h"
#include "memledger/core/error.h"
#include "memledger/core/output_file.h"
#include "memledger/model/tflm_plan.h"
#include "memledger/report/c_header.h"
#include "memledger/report/fit_report.h"
#include "memledger/report/html_report.h"
#include "model_options.h"

namespace memledger::cli {
namespace {

struct FitArgs {
  ModelOptions model;
  std::string device;
  FitCliOptions fit;
  bool all_steps = false;
  std::string json_path, html_path, c_header_path, tflite_path;
};

void run_fit_command(const FitArgs& args, int& exit_code) {
  // Every output is checked before any work and all are written together at the end.
  OutputSet outputs;
  protect_model(outputs, args.model.path);
  protect_device_file(outputs, args.device);
  if (!args.json_path.empty()) outputs.declare(args.json_path, "--json");
  if (!args.html_path.empty()) outputs.declare(args.html_path, "--html");
  if (!args.c_header_path.empty()) outputs.declare(args.c_header_path, "--emit-c");
  if (!args.tflite_path.empty()) outputs.declare(args.tflite_path, "--emit-tflite");
  const DeviceProfile profile = fit_profile(device_from_flag(args.device), args.fit);
  const ModelFile model = load_model_file(args.model);
  if (!args.tflite_path.empty() && model.format != ModelFormat::kTflite)
    fail("--emit-tflite: '{}' is not a TFLite model", args.model.path);
  const Graph& graph = model.graph;
  const FitResult fit = run_fit(graph, profile, args.fit, args.all_steps);

  fmt::print("model: {} ({} nodes)\n", args.model.path, graph.order().size());
  fmt::print("device: {}\n", describe_profile(profile));
  fmt::print("{}", fit_report_text(fit, profile));

  if (!args.json_path.empty()) outputs.stage(args.json_path, fit_report_json(fit, profile, args.model.path));
  if (!args.html_path.empty())
    outputs.stage(args.html_path, plan_report_html(fit.graph, fit.plan, profile, args.model.path));
  if (!args.c_header_path.empty()) {
    const CHeaderPatches patches = fit.patches ? c_header_patches(*fit.patches) : CHeaderPatches{};
    outputs.stage(args.c_header_path, for_flag("--emit-c", [&] {
                    return plan_c_header(fit.graph, fit.plan, profile, args.model.path,
                                         {.patches = fit.patches ? &patches : nullptr});
                  }));
  }
  if (!args.tflite_path.empty()) {
    // TFLM runs the file's operators in the file's order: a patched or reordered plan is refused by name.
    const TflmExport exported =
        for_flag("--emit-tflite", [&] { return tflm_offline_plan(fit.graph, fit.plan, model.tensor_values); });
    const std::vector<uint8_t> bytes =
        for_flag("--emit-tflite", [&] { return write_tflm_plan(args.model.path, exported); });
    fmt::print("\n{}", describe_tflm_export(exported));
    outputs.stage(args.tflite_path, std::string(bytes.begin(), bytes.end()));
  }
  outputs.commit();
  exit_code = static_cast<int>(fit.fits ? ExitCode::kOk : ExitCode::kDoesNotFit);
}

}  // namespace

void register_fit(CLI::App& app, int& exit_code) {
  auto* command = app.add_subcommand(
      "fit", "make a model fit the device: memory-aware order, in-place rules, then patch-based execution");
  auto args = std::make_shared<FitArgs>();
  add_model_options(command, args->model);
  command->add_option("--device", args->device, "device profile: a built-in name (teaching, host, mcu) or a TOML file")
      ->required();
  add_fit_options(command, args->fit);
  command->add_flag(
      "--all-steps", args->all_steps,
      "try every step even once the model fits (the figures of each; the plan stays the first that fits)");
  command->add_option("--json", args->json_path, "write the steps and the final plan as JSON here");
  command->add_option("--html", args->html_path, "write the final plan's HTML report here");
  command->add_option("--emit-c", args->c_header_path,
                      "write the final plan as a C header (arena, buffer offsets and sizes, schedule, patches) here");
  command->add_option("--emit-tflite", args->tflite_path,
                      "write the TFLite model with the final plan as TFLite Micro's OfflineMemoryAllocation here "
                      "(layer-by-layer plans in the file's order only)");
  command->callback([args, &exit_code] { run_fit_command(*args, exit_code); });
}

}  // namespace memledger::cli
