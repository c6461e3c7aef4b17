#include "model_options.h"

#include "flag_errors.h"

#include "memledger/model/read_model.h"
#include "memledger/onnx/external_data.h"
#include "memledger/passes/fold_constants.h"

namespace memledger::cli {

void add_model_options(CLI::App* command, ModelOptions& options) {
  command->add_option("model", options.path, "the model file (ONNX or TFLite)")->required();
  command->add_option("--input-shape", options.input_shapes,
                      "static shape of a graph input with dynamic dimensions, NAME=1x3x224x224 (repeatable)");
  command->add_option("--input-layout", options.input_layout, "layout of 4-D graph inputs")
      ->check(CLI::IsMember({"NCHW", "NHWC"}))
      ->capture_default_str();
  command->add_flag("--keep-qdq", options.keep_qdq,
                    "keep QuantizeLinear/DequantizeLinear as written (no integer operators): what folding saves");
}

ModelFile load_model_file(const ModelOptions& options) {
  ImportOptions import;
  for (const auto& text : options.input_shapes) parse_flag("--input-shape", [&] { add_input_shape(import, text); });
  import.input_layout_nhwc = options.input_layout == "NHWC";
  import.fold_quantized = !options.keep_qdq;
  ModelFile file = read_model(options.path, import);
  // Identity/Dropout over a constant is no work: folded so plans show only real steps.
  fold_identity_constants(file.graph);
  return file;
}

Graph load_model(const ModelOptions& options) { return std::move(load_model_file(options).graph); }

void protect_model(OutputSet& outputs, const std::string& path) {
  outputs.protect_input(path);
  bool tflite = false;
  try {
    tflite = model_format(path) == ModelFormat::kTflite;
  } catch (const Error&) {
    // Not readable: the import names the problem.
  }
  if (tflite) return;  // a TFLite model is one file
  for (const auto& file : external_data_files(path)) outputs.protect_input(file);
}

}  // namespace memledger::cli
