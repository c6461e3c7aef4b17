#include "memledger/model/read_model.h"

#include <fstream>

#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/tflite/import.h"

namespace memledger {

std::string_view to_string(ModelFormat format) { return format == ModelFormat::kTflite ? "tflite" : "onnx"; }

ModelFormat model_format(const std::string& path) {
  const int64_t size = check_input_file(path, int64_t{1} << 62, "model");
  std::ifstream in(path, std::ios::binary);
  uint8_t head[8] = {};
  if (size >= 8 && in.read(reinterpret_cast<char*>(head), 8) && has_tflite_identifier(head))
    return ModelFormat::kTflite;
  // A .tflite file without the identifier is a broken TFLite model: the reader says so.
  return path.ends_with(".tflite") ? ModelFormat::kTflite : ModelFormat::kOnnx;
}

ModelFile read_model(const std::string& path, const ImportOptions& onnx) {
  ModelFile file;
  file.format = model_format(path);
  if (file.format == ModelFormat::kOnnx) {
    file.graph = import_onnx_file(path, onnx);
    return file;
  }
  if (!onnx.input_shapes.empty())
    fail_option(ErrorOption::kInputShapes,
                "{}: input shapes apply to ONNX models; a TFLite model states every tensor's shape", path);
  TfliteModel model = import_tflite_file(path);
  file.graph = std::move(model.graph);
  file.tensor_values = std::move(model.tensor_values);
  return file;
}

}  // namespace memledger
