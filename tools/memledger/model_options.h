// The options every command that reads a model shares: `--input-shape NAME=1x3x224x224`
// (repeatable), `--input-layout NCHW|NHWC` and `--keep-qdq`.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "memledger/core/output_file.h"
#include "memledger/ir/graph.h"
#include "memledger/onnx/import.h"

namespace memledger::cli {

struct ModelOptions {
  std::string path;
  std::vector<std::string> input_shapes;
  std::string input_layout = "NCHW";
  bool keep_qdq = false;
};

// Adds the MODEL positional argument and the shared options to `command`.
void add_model_options(CLI::App* command, ModelOptions& options);

// Imports the model the options name and folds Identity/Dropout over constants.
Graph load_model(const ModelOptions& options);

// Protects the model file and every external-data file it names as inputs of `outputs`.
void protect_model(OutputSet& outputs, const std::string& path);

}  // namespace memledger::cli
