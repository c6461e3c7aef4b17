// Tensor files (.pb, .npy): a .pb goes through the one TensorProto codec the importer uses,
// so typed fields and packed int4 read as an initializer would; both formats round-trip
// every element type they hold, and a file whose data disagrees with its shape is refused
// with the file named.
#include "memledger/onnx/tensor_file.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>

#include "memledger/core/error.h"

namespace memledger {
namespace {

Tensor counting(DType type, Shape shape) {
  Tensor t(type, std::move(shape));
  auto bytes = t.bytes();
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>((i * 37 + 11) & 0x7F);
  return t;
}

TEST(TensorFile, EveryTypeRoundTripsThroughBothFormats) {
  for (DType type : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt8, DType::kUInt8, DType::kInt16,
                     DType::kUInt16, DType::kInt32, DType::kInt64, DType::kBool}) {
    Tensor t = counting(type, {2, 3});
    if (type == DType::kBool)
      for (auto& b : t.bytes()) b = static_cast<std::byte>(static_cast<uint8_t>(b) & 1);
    const NamedTensor pb = parse_tensor_proto(serialize_tensor_proto(t, "t"), "t.pb");
    EXPECT_EQ(pb.name, "t");
    EXPECT_TRUE(pb.tensor == t) << dtype_name(type);
    EXPECT_TRUE(parse_npy(serialize_npy(t), "t.npy").tensor == t) << dtype_name(type);
  }
  // int4 packs two to a byte in a .pb and unpacks sign-extended into the host's int8.
  Tensor q(DType::kInt4, {3});
  q.data<int8_t>()[0] = -8;
  q.data<int8_t>()[1] = 7;
  q.data<int8_t>()[2] = -1;
  const std::string bytes = serialize_tensor_proto(q, "q");
  onnx::TensorProto proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  EXPECT_EQ(proto.raw_data().size(), 2u);
  EXPECT_TRUE(parse_tensor_proto(bytes, "q.pb").tensor == q);
}

// ONNX's own test data mostly uses typed fields: float_data, int32_data for int8 (one value
// per entry), int64_data.
TEST(TensorFile, TypedFieldsReadAsTheImporterReadsThem) {
  onnx::TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(onnx::TensorProto::INT8);
  proto.add_dims(3);
  for (int v : {-3, 0, 100}) proto.add_int32_data(v);
  const NamedTensor t = parse_tensor_proto(proto.SerializeAsString(), "w.pb");
  ASSERT_EQ(t.tensor.dtype(), DType::kInt8);
  EXPECT_EQ(t.tensor.data<int8_t>()[0], -3);
  EXPECT_EQ(t.tensor.data<int8_t>()[2], 100);

  onnx::TensorProto f;
  f.set_data_type(onnx::TensorProto::FLOAT);
  f.add_dims(2);
  f.add_float_data(1.5f);
  f.add_float_data(-2.f);
  EXPECT_EQ(parse_tensor_proto(f.SerializeAsString(), "f.pb").tensor.data<float>()[1], -2.f);
}

TEST(TensorFile, DataThatDisagreesWithTheShapeIsRefusedNamingTheFile) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(4);
  proto.add_float_data(1.f);  // one value for four elements
  try {
    parse_tensor_proto(proto.SerializeAsString(), "short.pb");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("short.pb"), std::string::npos) << e.what();
  }
  proto.clear_float_data();
  proto.set_raw_data(std::string(12, '\0'));  // 12 bytes for 16
  EXPECT_THROW(parse_tensor_proto(proto.SerializeAsString(), "raw.pb"), Error);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_THROW(parse_tensor_proto(proto.SerializeAsString(), "ext.pb"), Error);
  EXPECT_THROW(parse_tensor_proto("\xff\xff\xff", "garbage.pb"), Error);
  std::string npy = serialize_npy(counting(DType::kFloat32, {4}));
  npy.pop_back();
  EXPECT_THROW(parse_npy(npy, "cut.npy"), Error);
}

}  // namespace
}  // namespace memledger
