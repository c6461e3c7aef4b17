#include "model_options.h"

#include "memledger/onnx/external_data.h"
#include "memledger/passes/fold_constants.h"

namespace memledger::cli {

void add_model_options(CLI::App* command, ModelOptions& options) {
  command->add_option("model", options.path, "the ONNX model file")->required();
  command->add_option("--input-shape", options.input_shapes,
                      "static shape of a graph input with dynamic dimensions, NAME=1x3x224x224 (repeatable)");
  command->add_option("--input-layout", options.input_layout, "layout of 4-D graph inputs")
      ->check(CLI::IsMember({"NCHW", "NHWC"}))
      ->capture_default_str();
  command->add_flag("--keep-qdq", options.keep_qdq,
                    "keep QuantizeLinear/DequantizeLinear as written (no integer operators): what folding saves");
}

Graph load_model(const ModelOptions& options) {
  ImportOptions import;
  for (const auto& text : options.input_shapes) add_input_shape(import, text);
  import.input_layout_nhwc = options.input_layout == "NHWC";
  import.fold_quantized = !options.keep_qdq;
  Graph graph = import_onnx_file(options.path, import);
  // Identity/Dropout over a constant is no work: folded so plans show only real steps.
  fold_identity_constants(graph);
  return graph;
}

void protect_model(OutputSet& outputs, const std::string& path) {
  outputs.protect_input(path);
  for (const auto& file : external_data_files(path)) outputs.protect_input(file);
}

}  // namespace memledger::cli
