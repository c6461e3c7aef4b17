// The inverse of the importer's fold, for export: an integer operator of the IR is written
// back as ONNX that onnxruntime runs with the same numbers. A requantizing operator over
// quantized values becomes DequantizeLinear → op → QuantizeLinear (the QDQ form
// onnxruntime folds into QLinear kernels itself); an integer product whose int32 output is
// not requantized becomes its QLinearForm with zero points (ConvInteger, MatMulInteger).
// Operators that only move integers (kSameQuant) are valid ONNX over integers as they are.
// Private to src/onnx; export_onnx_bytes applies it to its own copy of the graph.
#pragma once

#include "memledger/ir/graph.h"

namespace memledger::onnx_io {

void unfold_integer_operators(Graph& graph);

}  // namespace memledger::onnx_io
