#include "onnx/node_types.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <unordered_map>

#include "memledger/core/error.h"
#include "onnx/proto_tensor.h"

namespace memledger::onnx_io {
namespace {

// Constant inputs larger than this are not handed to libonnx's inference (no shape
// computation reads a tensor that large; weights would only be copied).
constexpr int64_t kMaxDataElements = int64_t{1} << 16;

onnx::TypeProto type_proto(const TensorType& t) {
  onnx::TypeProto proto;
  auto* tensor = proto.mutable_tensor_type();
  tensor->set_elem_type(dtype_onnx_code(t.dtype));
  auto* shape = tensor->mutable_shape();
  for (int64_t d : t.shape) shape->add_dim()->set_dim_value(d);
  return proto;
}

const onnx::OpSchema* schema_of(const NodeTyping& typing) {
  return onnx::OpSchemaRegistry::Schema(typing.node.op_type(), static_cast<int>(typing.opset), typing.node.domain());
}

// What libonnx's InferenceContext needs: types and data by name, and a node it may read.
struct Context {
  onnx::NodeProto node;
  std::vector<onnx::TypeProto> types;
  std::vector<onnx::TensorProto> data;
  std::unordered_map<std::string, onnx::TypeProto*> types_by_name;
  std::unordered_map<std::string, const onnx::TensorProto*> data_by_name;
  std::unordered_map<std::string, const onnx::SparseTensorProto*> sparse;

  explicit Context(const NodeTyping& typing) : node(typing.node) {
    types.reserve(typing.inputs.size());
    data.reserve(typing.inputs.size());
    for (size_t i = 0; i < typing.inputs.size(); ++i) {
      if (!typing.inputs[i]) continue;
      const std::string& name = node.input(static_cast<int>(i));
      types.push_back(type_proto(*typing.inputs[i]));
      types_by_name[name] = &types.back();
      if (typing.values[i] && typing.values[i]->elements() <= kMaxDataElements) {
        data.push_back(tensor_to_proto(*typing.values[i], name));
        data_by_name[name] = &data.back();
      }
    }
  }
};

}  // namespace

void check_types_with_schema(const NodeTyping& typing, const std::vector<TensorType>& outputs) {
  const onnx::OpSchema* schema = schema_of(typing);
  if (!schema) return;
  Context c(typing);
  onnx::shape_inference::InferenceContextImpl ctx(c.node, c.types_by_name, c.data_by_name, c.sparse);
  for (size_t o = 0; o < outputs.size() && o < ctx.getNumOutputs(); ++o) *ctx.getOutputType(o) = type_proto(outputs[o]);
  try {
    schema->CheckInputOutputType(ctx);
  } catch (const std::exception& e) {
    fail("node {}: element types: {}", typing.label, e.what());
  }
}

std::vector<std::optional<TensorType>> infer_with_libonnx(const NodeTyping& typing) {
  std::vector<std::optional<TensorType>> out(static_cast<size_t>(typing.node.output_size()));
  const onnx::OpSchema* schema = schema_of(typing);
  if (!schema || !schema->has_type_and_shape_inference_function()) return out;
  Context c(typing);
  onnx::shape_inference::InferenceContextImpl ctx(c.node, c.types_by_name, c.data_by_name, c.sparse);
  try {
    schema->CheckInputOutputType(ctx);
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    fail("node {}: shape inference fails: {}", typing.label, e.what());
  }
  for (size_t o = 0; o < out.size(); ++o) {
    const onnx::TypeProto* t = ctx.getOutputType(o);
    if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) continue;
    const auto dtype = dtype_from_onnx_code(t->tensor_type().elem_type());
    if (!dtype) continue;
    Shape shape;
    bool known = true;
    for (const auto& d : t->tensor_type().shape().dim()) {
      known = known && d.has_dim_value() && d.dim_value() >= 0;
      shape.push_back(d.dim_value());
    }
    if (known) out[o] = TensorType{*dtype, std::move(shape)};
  }
  return out;
}

}  // namespace memledger::onnx_io
