// The one entry every command reads a model through: ONNX or TFLite, told apart by the
// file's content (TFLite's "TFL3" identifier) and then its extension. The TFLite plan
// written back (OfflineMemoryAllocation) needs the tensor of each value: `tensor_values`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memledger/ir/graph.h"
#include "memledger/onnx/import.h"

namespace memledger {

enum class ModelFormat { kOnnx, kTflite };
std::string_view to_string(ModelFormat format);

struct ModelFile {
  Graph graph;
  ModelFormat format = ModelFormat::kOnnx;
  std::vector<ValueId> tensor_values;  // TFLite: the value of each tensor of subgraph 0
};

// The format of the file at `path`: TFLite when it carries the identifier or ends in
// .tflite (a broken TFLite file is then refused by the TFLite reader), ONNX otherwise. An Error naming the path when it
// cannot be read.
ModelFormat model_format(const std::string& path);

// Reads the model; `onnx` applies to ONNX files only (a TFLite file states every shape,
// so --input-shape given for one is an Error naming the option).
ModelFile read_model(const std::string& path, const ImportOptions& onnx = {});

}  // namespace memledger
