// Reading a .tflite model (TFLite's flatbuffer format, schema 3) into the IR, stated in
// TFLite's own layout (tflite-contract.md): activations NHWC with roles N, H, W, C, weights
// as the file lays them out, buffers as constants, quantization from the tensors'
// parameters, `Graph::requantization = kFixedPoint`. Every offset is checked by the
// flatbuffers Verifier before a field is read, then what the Verifier cannot check (buffer
// and tensor indices, buffer sizes, dims, operator codes); a malformed file is an Error
// naming the file and the field. Only subgraph 0 (the model's main graph) is read.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/ir/graph.h"

namespace memledger {

struct TfliteImportOptions {
  int64_t max_bytes = int64_t{2} << 30;  // a flatbuffer cannot be larger
};

struct TfliteModel {
  Graph graph;
  // The value of each tensor of subgraph 0, by tensor index (for the plan written back).
  std::vector<ValueId> tensor_values;
};

// True when `bytes` carries TFLite's file identifier "TFL3" (bytes 4..7).
bool has_tflite_identifier(std::span<const uint8_t> bytes);

// Reads a model from memory; `source` names it in messages.
TfliteModel import_tflite_bytes(std::span<const uint8_t> bytes, const std::string& source = "<memory>",
                                const TfliteImportOptions& options = {});
// Reads a model file; every failure is an Error whose message starts with the path.
TfliteModel import_tflite_file(const std::string& path, const TfliteImportOptions& options = {});

// The BuiltinOperator's name as the schema spells it ("CONV_2D"), or "BUILTIN_<code>".
std::string tflite_builtin_name(int32_t code);

}  // namespace memledger
