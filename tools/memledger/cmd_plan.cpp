// `memledger plan MODEL.onnx`: the ledger, the live-at-once timeline, the biggest
// contributors at the peak, the placement and whether it fits the device (exit 3 if not).
#include <fmt/format.h>

#include <optional>

#include "cmd_plan.h"
#include "device_option.h"
#include "exact_progress.h"
#include "flag_errors.h"
#include "memledger/core/error.h"
#include "memledger/core/output_file.h"
#include "memledger/core/text.h"
#include "memledger/fit/ordered_plan.h"
#include "memledger/model/tflm_plan.h"
#include "memledger/plan/banked_plan.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/report/c_header.h"
#include "memledger/report/html_report.h"
#include "memledger/report/json_report.h"
#include "memledger/report/text_report.h"
#include "memledger/sim/sim_report.h"

namespace memledger::cli {

void run_plan(const PlanArgs& args, int& exit_code) {
  // Every output is checked before any work, so a refusal leaves nothing behind.
  OutputSet outputs;
  protect_model(outputs, args.model.path);
  protect_device_file(outputs, args.device);
  if (!args.json_path.empty()) outputs.declare(args.json_path, "--json");
  if (!args.csv_path.empty()) outputs.declare(args.csv_path, "--csv");
  if (!args.html_path.empty()) outputs.declare(args.html_path, "--html");
  if (!args.c_header_path.empty()) outputs.declare(args.c_header_path, "--emit-c");
  if (!args.tflite_path.empty()) outputs.declare(args.tflite_path, "--emit-tflite");
  const DeviceProfile profile = device_from_flag(args.device);
  if (!profile.banks.empty() && !args.csv_path.empty())
    fail("--csv: device '{}' has banks; the banked plan is in the text, --json, --html and --emit-c outputs",
         profile.name);
  const ScheduleKind schedule_kind = parse_flag("--schedule", [&] { return parse_schedule_kind(args.schedule); });
  ModelFile model = load_model_file(args.model);
  if (!args.tflite_path.empty() && model.format != ModelFormat::kTflite)
    fail("--emit-tflite: '{}' is not a TFLite model", args.model.path);
  const auto algorithm = allocate::parse_algorithm(args.algorithm);
  if (!algorithm) fail("--algorithm '{}': expected {}", args.algorithm, allocate::algorithm_choices());
  PlacementOptions placement{.algorithm = *algorithm, .time_budget_seconds = args.time_budget};
  std::optional<ScheduleOptions> search;
  if (schedule_kind == ScheduleKind::kMemory) search = ScheduleOptions{.time_budget_seconds = args.schedule_budget};
  std::shared_ptr<Progress> progress;
  if (*algorithm == allocate::Algorithm::kExact) {
    progress = exact_search_progress(args.time_budget, placement.on_exact_progress);
  }
  const OrderedPlan ordered =
      plan_in_order(std::move(model.graph), profile,
                    {.donate_inputs = args.donate_inputs, .in_place = !args.no_in_place}, placement, search);
  if (progress) progress->finish();
  const Graph& graph = ordered.graph;
  const MemoryPlan& plan = ordered.plan;
  const ScheduleResult* schedule = ordered.schedule_or_null();

  fmt::print("model: {} ({} nodes, {} buffers)\n", escape_for_terminal(args.model.path), graph.order().size(),
             plan.liveness.buffers.size());
  fmt::print("device: {}\n\n", describe_profile(profile));
  fmt::print("{}", escape_for_terminal(text_report(plan, {.buffers = !args.brief, .schedule = schedule}), true));

  std::optional<sim::SimReport> sim_report;
  if (args.sim) {
    sim_report = sim::simulate(
        graph, profile,
        {.parameters = args.sim_reload ? sim::ParameterReuse::kReloadPerTile : sim::ParameterReuse::kReuse,
         .kernel_workspace = !args.sim_no_workspace});
    fmt::print("\n{}", escape_for_terminal(sim::sim_report_text(*sim_report), true));
  }

  if (!args.json_path.empty()) {
    outputs.stage(args.json_path, plan_report_json(graph, plan, profile, args.model.path,
                                                   sim_report ? &*sim_report : nullptr, schedule));
  }
  if (!args.csv_path.empty()) outputs.stage(args.csv_path, plan_csv(plan));
  if (!args.html_path.empty())
    outputs.stage(args.html_path, plan_report_html(graph, plan, profile, args.model.path, schedule));
  if (!args.c_header_path.empty())
    outputs.stage(args.c_header_path,
                  for_flag("--emit-c", [&] { return plan_c_header(graph, plan, profile, args.model.path); }));
  if (!args.tflite_path.empty()) {
    const TflmExport exported =
        for_flag("--emit-tflite", [&] { return tflm_offline_plan(graph, plan, model.tensor_values); });
    const std::vector<uint8_t> bytes =
        for_flag("--emit-tflite", [&] { return write_tflm_plan(args.model.path, exported); });
    fmt::print("\n{}", describe_tflm_export(exported));
    outputs.stage(args.tflite_path, std::string(bytes.begin(), bytes.end()));
  }
  outputs.commit();
  if (!plan.fits && plan.banked) {
    for (const std::string& overflow : plan.banked->solution.overflows)
      fmt::print(stderr, "memledger: {}\n", escape_for_terminal(overflow));
    exit_code = static_cast<int>(ExitCode::kDoesNotFit);
  } else if (!plan.fits) {
    fmt::print(stderr, "memledger: the plan needs {} B but '{}' has {} B ({} B too many)\n", plan.arena_bytes,
               profile.name, profile.capacity_bytes, plan.arena_bytes - profile.capacity_bytes);
    exit_code = static_cast<int>(ExitCode::kDoesNotFit);
  }
}

}  // namespace memledger::cli
