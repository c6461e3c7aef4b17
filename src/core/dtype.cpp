#include "memledger/core/dtype.h"

#include <array>

#include "memledger/core/error.h"

namespace memledger {
namespace {

struct DTypeInfo {
  DType type;
  int bits;
  std::string_view name;
  std::string_view onnx_name;
  int onnx_code;
  bool is_float;
  bool is_signed;
};

// Codes from onnx.proto's TensorProto.DataType.
constexpr std::array<DTypeInfo, 13> kInfo{{
    {DType::kBool, 8, "bool", "BOOL", 9, false, false},
    {DType::kInt4, 4, "int4", "INT4", 22, false, true},
    {DType::kUInt4, 4, "uint4", "UINT4", 21, false, false},
    {DType::kInt8, 8, "int8", "INT8", 3, false, true},
    {DType::kUInt8, 8, "uint8", "UINT8", 2, false, false},
    {DType::kInt16, 16, "int16", "INT16", 5, false, true},
    {DType::kUInt16, 16, "uint16", "UINT16", 4, false, false},
    {DType::kInt32, 32, "int32", "INT32", 6, false, true},
    {DType::kInt64, 64, "int64", "INT64", 7, false, true},
    {DType::kFloat16, 16, "float16", "FLOAT16", 10, true, true},
    {DType::kBFloat16, 16, "bfloat16", "BFLOAT16", 16, true, true},
    {DType::kFloat32, 32, "float32", "FLOAT", 1, true, true},
    {DType::kFloat64, 64, "float64", "DOUBLE", 11, true, true},
}};

const DTypeInfo& info(DType type) {
  const auto index = static_cast<size_t>(type);
  ML_CHECK(index < kInfo.size() && kInfo[index].type == type, "dtype {}", index);
  return kInfo[index];
}

constexpr std::array<DType, 13> kAll = [] {
  std::array<DType, 13> all{};
  for (size_t i = 0; i < kInfo.size(); ++i) all[i] = kInfo[i].type;
  return all;
}();

}  // namespace

int dtype_bits(DType type) { return info(type).bits; }
std::string_view dtype_name(DType type) { return info(type).name; }
std::string_view dtype_onnx_name(DType type) { return info(type).onnx_name; }
int dtype_onnx_code(DType type) { return info(type).onnx_code; }
bool dtype_is_float(DType type) { return info(type).is_float; }
bool dtype_is_signed(DType type) { return info(type).is_signed; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}

std::optional<DType> dtype_from_onnx_code(int code) {
  for (const auto& i : kInfo)
    if (i.onnx_code == code) return i.type;
  return std::nullopt;
}

std::span<const DType> all_dtypes() { return kAll; }

}  // namespace memledger
