#include "onnx/proto_tensor.h"

#include <cstring>
#include <optional>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"

namespace memledger::onnx_io {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

std::string onnx_type_name(int code) {
  if (TensorProto::DataType_IsValid(code)) return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(code));
  return "code " + std::to_string(code);
}

bool is_sub_byte(DType type) { return dtype_bits(type) < 8; }

// Copies `count` little-endian integers of `width` bytes each (the low bytes of `values`).
template <typename Field>
void copy_low_bytes(const Field& values, std::span<std::byte> out, int width) {
  for (int i = 0; i < values.size(); ++i) {
    const auto v = values.Get(i);
    std::memcpy(out.data() + static_cast<size_t>(i) * static_cast<size_t>(width), &v, static_cast<size_t>(width));
  }
}

void unpack_int4(std::span<const std::byte> packed, Tensor& out) {
  const bool is_signed = out.dtype() == DType::kInt4;
  auto bytes = out.bytes();
  for (int64_t i = 0; i < out.elements(); ++i) {
    const auto byte = static_cast<uint8_t>(packed[static_cast<size_t>(i / 2)]);
    uint8_t nibble = (i % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
    if (is_signed && (nibble & 0x08)) nibble |= 0xF0;  // sign-extend into the host int8
    bytes[static_cast<size_t>(i)] = static_cast<std::byte>(nibble);
  }
}

}  // namespace

namespace {

struct CheckedTensor {
  DType type;
  Shape shape;
};

// Every check tensor_from_proto makes, without allocating anything.
CheckedTensor checked_tensor(const TensorProto& proto, const std::string& what) {
  if (proto.data_type() == TensorProto::STRING) fail("{}: string tensors are not supported", what);
  const auto type = dtype_from_onnx_code(proto.data_type());
  if (!type) fail("{}: element type {} is not supported", what, onnx_type_name(proto.data_type()));
  if (proto.has_segment()) fail("{}: segmented tensors are not supported", what);
  if (proto.data_location() == TensorProto::EXTERNAL)
    fail("{}: external data was not resolved (import from a file to read it)", what);
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0) fail("{}: negative extent in shape {}", what, shape_to_string(shape));
  const int64_t elements = element_count(shape, what);
  const int bits = dtype_bits(*type);

  if (proto.has_raw_data()) {
    const int64_t expected = ceil_div(checked_mul(elements, bits, what), 8);
    const auto& raw = proto.raw_data();
    if (static_cast<int64_t>(raw.size()) != expected)
      fail("{}: shape {} of {} needs {} bytes but raw_data holds {}", what, shape_to_string(shape), dtype_name(*type),
           expected, raw.size());
    return {*type, shape};
  }

  // Typed fields: which one holds the data, and how many entries it must have (int4
  // packs two elements into one int32_data entry).
  int64_t entries = 0;
  int64_t expected_entries = elements;
  switch (*type) {
    case DType::kFloat32:
      entries = proto.float_data_size();
      break;
    case DType::kFloat64:
      entries = proto.double_data_size();
      break;
    case DType::kInt64:
      entries = proto.int64_data_size();
      break;
    case DType::kInt4:
    case DType::kUInt4:
      entries = proto.int32_data_size();
      expected_entries = ceil_div(elements, 2);
      break;
    default:
      entries = proto.int32_data_size();
      break;
  }
  if (entries != expected_entries)
    fail("{}: shape {} declares {} elements but the tensor holds {} values", what, shape_to_string(shape), elements,
         entries);
  return {*type, shape};
}

}  // namespace

void check_tensor_proto(const TensorProto& proto, const std::string& what) { checked_tensor(proto, what); }

Tensor tensor_from_proto(const TensorProto& proto, const std::string& what) {
  const auto [type_value, shape] = checked_tensor(proto, what);
  const std::optional<DType> type = type_value;
  if (proto.has_raw_data()) {
    const auto& raw = proto.raw_data();
    Tensor tensor(*type, shape);
    const auto* data = reinterpret_cast<const std::byte*>(raw.data());
    if (is_sub_byte(*type))
      unpack_int4({data, raw.size()}, tensor);
    else if (!raw.empty())
      std::memcpy(tensor.bytes().data(), data, raw.size());
    return tensor;
  }
  Tensor tensor(*type, shape);
  const int width = host_element_bytes(*type);
  switch (*type) {
    case DType::kFloat32:
      copy_low_bytes(proto.float_data(), tensor.bytes(), width);
      break;
    case DType::kFloat64:
      copy_low_bytes(proto.double_data(), tensor.bytes(), width);
      break;
    case DType::kInt64:
      copy_low_bytes(proto.int64_data(), tensor.bytes(), width);
      break;
    case DType::kInt4:
    case DType::kUInt4: {
      std::vector<std::byte> packed(static_cast<size_t>(proto.int32_data_size()));
      for (int i = 0; i < proto.int32_data_size(); ++i)
        packed[static_cast<size_t>(i)] = static_cast<std::byte>(proto.int32_data(i) & 0xFF);
      unpack_int4(packed, tensor);
      break;
    }
    default:
      copy_low_bytes(proto.int32_data(), tensor.bytes(), width);
      break;
  }
  return tensor;
}

TensorProto tensor_to_proto(const Tensor& tensor, const std::string& name) {
  TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(dtype_onnx_code(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  std::string raw;
  if (is_sub_byte(tensor.dtype())) {
    raw.assign(static_cast<size_t>(ceil_div(tensor.elements(), 2)), '\0');
    const auto bytes = tensor.bytes();
    for (int64_t i = 0; i < tensor.elements(); ++i) {
      const auto nibble = static_cast<uint8_t>(static_cast<uint8_t>(bytes[static_cast<size_t>(i)]) & 0x0F);
      raw[static_cast<size_t>(i / 2)] |= static_cast<char>(i % 2 == 0 ? nibble : nibble << 4);
    }
  } else {
    raw.assign(reinterpret_cast<const char*>(tensor.bytes().data()), tensor.bytes().size());
  }
  proto.set_raw_data(std::move(raw));
  return proto;
}

Attribute attribute_from_proto(const AttributeProto& proto, const std::string& node_label) {
  const std::string what = "node " + node_label + ": attribute '" + proto.name() + "'";
  switch (proto.type()) {
    case AttributeProto::FLOAT:
      return proto.f();
    case AttributeProto::INT:
      return static_cast<int64_t>(proto.i());
    case AttributeProto::STRING:
      return proto.s();
    case AttributeProto::FLOATS:
      return std::vector<float>(proto.floats().begin(), proto.floats().end());
    case AttributeProto::INTS:
      return std::vector<int64_t>(proto.ints().begin(), proto.ints().end());
    case AttributeProto::STRINGS:
      return std::vector<std::string>(proto.strings().begin(), proto.strings().end());
    case AttributeProto::TENSOR:
      return tensor_from_proto(proto.t(), what);
    case AttributeProto::GRAPH:
    case AttributeProto::GRAPHS:
      fail("{} is a subgraph (If/Loop/Scan control flow is not supported)", what);
    case AttributeProto::SPARSE_TENSOR:
    case AttributeProto::SPARSE_TENSORS:
      fail("{} is a sparse tensor (not supported)", what);
    default:
      fail("{} has kind {}, which is not supported", what,
           AttributeProto::AttributeType_IsValid(proto.type()) ? AttributeProto::AttributeType_Name(proto.type())
                                                               : std::to_string(proto.type()));
  }
}

AttributeProto attribute_to_proto(const std::string& name, const Attribute& attribute) {
  AttributeProto proto;
  proto.set_name(name);
  struct Writer {
    AttributeProto& p;
    void operator()(int64_t v) const {
      p.set_type(AttributeProto::INT);
      p.set_i(v);
    }
    void operator()(float v) const {
      p.set_type(AttributeProto::FLOAT);
      p.set_f(v);
    }
    void operator()(const std::string& v) const {
      p.set_type(AttributeProto::STRING);
      p.set_s(v);
    }
    void operator()(const std::vector<int64_t>& v) const {
      p.set_type(AttributeProto::INTS);
      for (int64_t x : v) p.add_ints(x);
    }
    void operator()(const std::vector<float>& v) const {
      p.set_type(AttributeProto::FLOATS);
      for (float x : v) p.add_floats(x);
    }
    void operator()(const std::vector<std::string>& v) const {
      p.set_type(AttributeProto::STRINGS);
      for (const auto& x : v) p.add_strings(x);
    }
    void operator()(const Tensor& t) const {
      p.set_type(AttributeProto::TENSOR);
      *p.mutable_t() = tensor_to_proto(t, "");
    }
  };
  std::visit(Writer{proto}, attribute);
  return proto;
}

}  // namespace memledger::onnx_io
