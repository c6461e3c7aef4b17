// What `memledger run` takes from its flags (cmd_run_flags.cpp declares them) and the
// command that runs with them (cmd_run.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fit_options.h"
#include "memledger/exec/interpreter.h"
#include "model_options.h"

namespace memledger::cli {

struct RunCommandOptions {
  ModelOptions model;
  std::vector<std::string> inputs;  // NAME=FILE
  std::string output_dir;
  std::string output_format = "npy";
  uint64_t seed = 0;
  std::string compare;
  double tolerance = 1e-4;
  bool arena = false;
  std::string device;
  std::string schedule = "model";
  std::string kernels = "fast";
  int threads = 1;
  int repeat = 0;
  bool no_prepack = false;
  bool fit = false;
  FitCliOptions fit_options;
  int64_t max_memory = kDefaultMaxMemoryBytes;
};

void run_command(const RunCommandOptions& o, int& exit_code);

}  // namespace memledger::cli
