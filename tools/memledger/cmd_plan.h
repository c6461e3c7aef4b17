// What `memledger plan` takes from its flags (cmd_plan_flags.cpp declares them) and the
// command that runs with them (cmd_plan.cpp).
#pragma once

#include <string>

#include "model_options.h"

namespace memledger::cli {

struct PlanArgs {
  ModelOptions model;
  std::string device;
  std::string json_path, csv_path, html_path, c_header_path, tflite_path;
  std::string algorithm = "exact";
  double time_budget = 2.0;
  std::string schedule = "model";
  double schedule_budget = 1.0;
  bool donate_inputs = false;
  bool no_in_place = false;
  bool brief = false;
  bool sim = false, sim_reload = false, sim_no_workspace = false;
};

void run_plan(const PlanArgs& args, int& exit_code);

}  // namespace memledger::cli
