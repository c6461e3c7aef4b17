// Conversions between ONNX's TensorProto / AttributeProto and the IR's Tensor / Attribute,
// shared by import and export. Private to src/onnx (it names libonnx types).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "memledger/core/tensor.h"
#include "memledger/ir/attribute.h"

namespace memledger::onnx_io {

// A TensorProto whose data lies in the message (raw_data or a typed field) → Tensor. The
// declared shape's size must match the data present before anything is allocated; `what`
// names the tensor in messages ("initializer 'w'").
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& what);
// The checks tensor_from_proto makes (an Error naming `what`), without allocating.
void check_tensor_proto(const onnx::TensorProto& proto, const std::string& what);

// Tensor → TensorProto with raw_data (little-endian; int4 packed two per byte).
onnx::TensorProto tensor_to_proto(const Tensor& tensor, const std::string& name);

// An attribute → the IR's; subgraphs, sparse tensors and type attributes are an Error
// naming `node_label` and the attribute.
Attribute attribute_from_proto(const onnx::AttributeProto& proto, const std::string& node_label);

onnx::AttributeProto attribute_to_proto(const std::string& name, const Attribute& attribute);

}  // namespace memledger::onnx_io
