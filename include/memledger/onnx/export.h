// Writes the graph IR back as an ONNX model that libonnx's checker accepts: constants as
// initializers with raw_data, every value's shape in value_info, and memledger's own
// operators lowered to standard ONNX (Affine → Mul + Add), and integer operators over
// quantized values written back as DequantizeLinear → op → QuantizeLinear (an int32
// accumulator output as ConvInteger / MatMulInteger), which onnxruntime runs (onnx/unfold_integer).
#pragma once

#include <string>

#include "memledger/ir/graph.h"

namespace memledger {

// The serialized ModelProto; an Error when the checker refuses the result (a bug) or the
// model would exceed protobuf's 2 GiB limit.
std::string export_onnx_bytes(const Graph& graph);

// Writes the model to `path` through a temporary file in the same folder and a rename, so
// a failure leaves nothing behind. Refuses to write over `input_path` (the model it was
// read from), whatever the spelling of either path.
void export_onnx_file(const Graph& graph, const std::string& path, const std::string& input_path = "");

}  // namespace memledger
