// `memledger inspect MODEL.onnx`: imports the model and prints the library's inspection of
// it (report/inspect_report.h) as text or JSON.
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "device_option.h"
#include "flag_errors.h"
#include "memledger/core/text.h"
#include "memledger/model/read_model.h"
#include "memledger/onnx/import.h"
#include "memledger/passes/fold_constants.h"
#include "memledger/report/inspect_report.h"

namespace memledger::cli {
namespace {

struct InspectOptions {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string input_layout = "NCHW";
  std::string device;
  std::string format = "text";
  bool keep_qdq = false;
};

void run_inspect(const InspectOptions& o) {
  const DeviceProfile profile = device_from_flag(o.device);
  ImportOptions import_options;
  for (const auto& text : o.input_shapes) parse_flag("--input-shape", [&] { add_input_shape(import_options, text); });
  import_options.input_layout_nhwc = o.input_layout == "NHWC";
  import_options.fold_quantized = !o.keep_qdq;
  Graph g = read_model(o.model, import_options).graph;
  fold_identity_constants(g);  // exporter Identity nodes over initializers are no work
  const Inspection inspection = inspect_graph(g, profile);
  // Names in the text form come from the file: control characters are printed escaped.
  fmt::print("{}", o.format == "json" ? inspection_json(g, profile, inspection, o.model)
                                      : escape_for_terminal(inspection_text(g, profile, inspection, o.model), true));
}

}  // namespace

void register_inspect(CLI::App& app, int& exit_code) {
  auto* command =
      app.add_subcommand("inspect", "show a model as memledger reads it: nodes, shapes, axis roles, layouts, lint");
  auto options = std::make_shared<InspectOptions>();
  command->add_option("model", options->model, "the model file (ONNX or TFLite)")->required();
  command->add_option("--input-shape", options->input_shapes,
                      "static shape of a graph input with dynamic dimensions, NAME=1x3x224x224 (repeatable)");
  command->add_option("--input-layout", options->input_layout, "layout of 4-D graph inputs")
      ->check(CLI::IsMember({"NCHW", "NHWC"}))
      ->capture_default_str();
  command->add_flag("--keep-qdq", options->keep_qdq,
                    "keep QuantizeLinear/DequantizeLinear as written (no integer operators)");
  add_device_option(command, options->device, "host");
  command->add_option("--format", options->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command->callback([options, &exit_code] {
    run_inspect(*options);
    exit_code = static_cast<int>(ExitCode::kOk);
  });
}

}  // namespace memledger::cli
