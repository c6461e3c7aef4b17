// Names go into JSON reports, which must be UTF-8: every name in a graph (graph, inputs,
// outputs, value_info, initializers, nodes, operators, node inputs and outputs) is checked
// at import, and one that is not valid UTF-8 is an Error naming it (escaped). Private to
// src/onnx. (The attribute checks that once lived beside this are the op table's shape
// rules now: ir/shape_rules.cpp.)
#pragma once

#include <onnx/onnx_pb.h>

namespace memledger::onnx_io {

void check_names(const onnx::GraphProto& graph);

}  // namespace memledger::onnx_io
