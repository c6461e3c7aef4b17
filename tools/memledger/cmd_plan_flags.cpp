// The flags of `memledger plan` (cmd_plan.h: the options they fill).
#include <memory>

#include "cmd_plan.h"
#include "commands.h"
#include "device_option.h"
#include "memledger/plan/allocate/planner.h"
#include "option_checks.h"

namespace memledger::cli {

void register_plan(CLI::App& app, int& exit_code) {
  auto* command = app.add_subcommand("plan", "the memory ledger, live-at-once timeline and arena plan of a model");
  auto args = std::make_shared<PlanArgs>();
  add_model_options(command, args->model);
  add_device_option(command, args->device, "host");
  command->add_option("--json", args->json_path, "write the JSON report here");
  command->add_option("--html", args->html_path, "write the HTML report (arena picture, live-at-once curve) here");
  command->add_option("--emit-c", args->c_header_path,
                      "write the plan as a C header (arena size, buffer offsets and sizes, the schedule) here");
  command->add_option("--emit-tflite", args->tflite_path,
                      "write the TFLite model with the plan as TFLite Micro's OfflineMemoryAllocation metadata here");
  command->add_option("--csv", args->csv_path,
                      "write the placement problem and offsets as CSV (id,lower,upper,size,offset)");
  command->add_option("--algorithm", args->algorithm, "placement: " + allocate::algorithm_choices())
      ->capture_default_str();
  command->add_option("--time-budget", args->time_budget, "seconds the exact placement may search")
      ->check(finite_non_negative())
      ->capture_default_str();
  command
      ->add_option("--schedule", args->schedule,
                   "execution order: model (the graph's own) or memory (a topological order of least peak-live)")
      ->capture_default_str();
  command->add_option("--schedule-budget", args->schedule_budget, "seconds the exact memory-aware search may take")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_flag("--donate-inputs", args->donate_inputs,
                    "the program owns its input buffers and may overwrite them");
  command->add_flag("--no-in-place", args->no_in_place, "plan without in-place reuse (the no-reuse figures)");
  command->add_flag("--brief", args->brief, "leave out the per-buffer table");
  command->add_flag("--sim", args->sim,
                    "NPU mode: tiles in local memory and the DMA traffic ledger (needs [dma] external_bytes)");
  command->add_flag("--sim-reload", args->sim_reload, "with --sim: reload parameters with every tile (naive schedule)");
  command->add_flag("--sim-no-workspace", args->sim_no_workspace, "with --sim: tiles need no kernel workspace");
  command->callback([args, &exit_code] { run_plan(*args, exit_code); });
}

}  // namespace memledger::cli
