// libonnx's part in typing one node at import: its schemas' element-type constraints
// (which input and output types an operator accepts), and its inference for an operator
// the op table has no shape rule for (other ONNX domains, and the few operators whose
// extents depend on data). Node by node: libonnx never sees an attribute the table's rules
// have not checked. Private to src/onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "memledger/ir/shape_rule.h"

namespace memledger::onnx_io {

// The node as libonnx sees it: its inputs' types and constant values.
struct NodeTyping {
  const onnx::NodeProto& node;
  const std::string& label;
  int64_t opset;  // of the node's domain
  const std::vector<std::optional<TensorType>>& inputs;
  const std::vector<const Tensor*>& values;
};

// Checks inputs and `outputs` against the schema's type constraints; an Error naming the
// node. Nothing is checked for an operator without a schema.
void check_types_with_schema(const NodeTyping& typing, const std::vector<TensorType>& outputs);

// The outputs' types by libonnx's inference for this node alone; an output without a
// static type (or every output, for an operator libonnx does not know) is empty. An Error
// naming the node when the inference refuses it.
std::vector<std::optional<TensorType>> infer_with_libonnx(const NodeTyping& typing);

}  // namespace memledger::onnx_io
