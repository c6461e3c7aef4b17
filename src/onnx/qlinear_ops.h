// Reads operators that write an integer operator out with its quantization parameters as
// inputs (the op table's QLinearForm: QLinearConv, QLinearMatMul, ConvInteger,
// MatMulInteger) as that operator over quantized values: QLinearConv(x, x_scale, x_zp, w,
// w_scale, w_zp, y_scale, y_zp, B) becomes Conv(x, w, B) with the parameters on x, w, y and
// the int32 bias (scale x_scale·w_scale, zero point 0), the form fold_qdq gives a QDQ model.
// ConvInteger and MatMulInteger give an int32 output without parameters: the accumulator,
// not requantized. A node whose parameters are computed when the model runs (dynamic
// quantization) stays as it is. Private to src/onnx; called by the importer.
#pragma once

#include "memledger/ir/graph.h"

namespace memledger::onnx_io {

// The number of nodes read as integer operators.
int read_qlinear_operators(Graph& graph);

}  // namespace memledger::onnx_io
