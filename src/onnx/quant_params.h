// Quantization parameters that an ONNX node carries as inputs (QuantizeLinear's and
// DequantizeLinear's scale and zero point, a QLinear operator's pairs), read from constants
// and checked (ir/quantization_check.h), and the check that an integer product with an
// int32 bias cannot overflow its accumulator. Private to src/onnx (fold_qdq, qlinear_ops).
#pragma once

#include <optional>
#include <string>

#include "memledger/ir/graph.h"
#include "memledger/ir/op_table.h"

namespace memledger::onnx_io {

// The parameters of `integer`, a value of `node`, from the node's inputs `scale_input` and
// `zero_point_input` (omitted: 0), or nullopt when either is not a constant (computed when
// the model runs). A 1-D scale of more than one element runs along `axis` (negative: from
// the end). Bad parameters are an Error naming the node and the input.
std::optional<Quantization> constant_quantization(const Graph& g, const Node& node, ValueId integer, size_t scale_input,
                                                  size_t zero_point_input, int64_t axis);

// An integer product's worst case: for each output channel, |bias| plus Σ |w − zp_w| ·
// max |x − zp_x| over x's type must fit int32 (the accumulator). `w_out_axis` is the weight
// axis that indexes output channels (Conv 0; MatMul and Gemm with transB = 0: 1). An Error
// naming the node and the bias otherwise.
// The axis of `node`'s weight input (its IntegerRule's) that indexes output channels.
int weight_channel_axis(const Graph& g, const Node& node, const IntegerRule& rule);
void check_accumulator(const Graph& g, const Node& node, ValueId x, ValueId w, ValueId bias, int w_out_axis);

}  // namespace memledger::onnx_io
