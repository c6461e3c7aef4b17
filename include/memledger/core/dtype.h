// Element types: their storage width in bits and their ONNX names and TensorProto codes.
// The width is the packed width (int4 is 4 bits); how elements round to bytes is the
// layout contract's business (core/layout.h), never the dtype's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace memledger {

enum class DType : uint8_t {
  kBool,
  kInt4,
  kUInt4,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

// Bits one element occupies when packed (bool is stored as a byte, as ONNX does).
int dtype_bits(DType type);
// The short lower-case name used in text output and device profiles: "int8", "float32".
std::string_view dtype_name(DType type);
// ONNX's TensorProto.DataType enumerator name: "INT8", "FLOAT".
std::string_view dtype_onnx_name(DType type);
// ONNX's TensorProto.DataType code: FLOAT = 1, INT4 = 22.
int dtype_onnx_code(DType type);

bool dtype_is_float(DType type);
bool dtype_is_signed(DType type);

std::optional<DType> dtype_from_name(std::string_view name);
std::optional<DType> dtype_from_onnx_code(int code);

std::span<const DType> all_dtypes();

}  // namespace memledger
