// Folds DequantizeLinear → op → QuantizeLinear into the integer operator of the same name
// (DESIGN.md §11), as onnxruntime does before it allocates: the ledger then counts the int8
// activations a QDQ model really holds, never their float shadows. Called by the importer
// once every value has its type; private to src/onnx.
//
// Which operators fold, and how, is the op table's IntegerRule: the quantized inputs must
// each come from a DequantizeLinear with constant parameters, the output's readers must all
// be QuantizeLinear nodes with the same constant parameters, and a kSameQuant operator folds
// only when those equal its input's. The node then reads the DequantizeLinears' integer
// inputs and writes the QuantizeLinear's integer output; every integer value gets its
// Value::quant. A DequantizeLinear is removed once nothing reads it. QuantizeLinear and
// DequantizeLinear stay where the graph changes type (a float input, a float output, an
// operator without an integer form). Bad parameters (ir/quantization_check.h) and an int32
// bias that can overflow are an Error naming the node and the field.
#pragma once

#include "memledger/ir/graph.h"

namespace memledger::onnx_io {

// Statistics of one fold, for tests and reports.
struct QdqFold {
  int folded = 0;  // operators now integer
  int removed_dequantize = 0;
  int removed_quantize = 0;
};

QdqFold fold_qdq(Graph& graph);

}  // namespace memledger::onnx_io
