#include "memledger/core/dtype.h"

#include <gtest/gtest.h>

#include <set>

namespace memledger {
namespace {

TEST(DType, WidthsAndOnnxNames) {
  EXPECT_EQ(dtype_bits(DType::kInt4), 4);
  EXPECT_EQ(dtype_bits(DType::kUInt4), 4);
  EXPECT_EQ(dtype_bits(DType::kBool), 8);
  EXPECT_EQ(dtype_bits(DType::kBFloat16), 16);
  EXPECT_EQ(dtype_bits(DType::kFloat64), 64);
  EXPECT_EQ(dtype_onnx_name(DType::kFloat32), "FLOAT");
  EXPECT_EQ(dtype_onnx_code(DType::kFloat32), 1);
  EXPECT_EQ(dtype_onnx_code(DType::kInt4), 22);
  EXPECT_EQ(dtype_onnx_code(DType::kUInt4), 21);
  EXPECT_EQ(dtype_onnx_code(DType::kBFloat16), 16);
}

TEST(DType, NamesAndCodesRoundTripAndAreUnique) {
  std::set<int> codes;
  std::set<std::string_view> names;
  EXPECT_EQ(all_dtypes().size(), 13u);
  for (DType t : all_dtypes()) {
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
    EXPECT_EQ(dtype_from_onnx_code(dtype_onnx_code(t)), t);
    EXPECT_TRUE(codes.insert(dtype_onnx_code(t)).second);
    EXPECT_TRUE(names.insert(dtype_name(t)).second);
  }
  EXPECT_FALSE(dtype_from_name("int3").has_value());
  EXPECT_FALSE(dtype_from_onnx_code(8).has_value());  // STRING has no element width
}

}  // namespace
}  // namespace memledger
