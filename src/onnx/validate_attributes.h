// Checks at import of the attributes and constant operands that libonnx's shape inference
// or our kernels would trust blindly: Slice steps of 0 or ±2^63 (libonnx crashed or grew
// without bound), Conv and pooling strides of 0 (SIGFPE), window ranks, huge pads,
// ConstantOfShape sizes past the import bound; after shape inference, bias lengths of
// Gemm and Conv. Each refusal is an Error naming the node and the field. Private to src/onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>

#include "memledger/ir/graph.h"

namespace memledger::onnx_io {

// Before libonnx's shape inference. `max_bytes`: the largest tensor a constant-shaped
// node (ConstantOfShape) may produce.
void validate_attributes(const onnx::GraphProto& graph, int64_t max_bytes);

// After import, with every shape static: operands whose length the operator fixes.
void validate_operand_shapes(const Graph& graph);

}  // namespace memledger::onnx_io
