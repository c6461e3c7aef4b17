// The TFLite data-movement kernels on small cases checked element by element: PAD with the
// output's zero point, TRANSPOSE, STRIDED_SLICE with masks, negative strides and
// shrink_axis, CONCATENATION that rescales an input of another quantization, and
// RESIZE_NEAREST_NEIGHBOR with each of its coordinate rules.
#include <gtest/gtest.h>

#include "exec/tflite/kernel_case.h"

namespace memledger::tflite_test {
namespace {

std::vector<int8_t> iota8(int n) {
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<int8_t>(i + 1);
  return v;
}

TEST(TfliteDataMovement, PadWithTheZeroPoint) {
  KernelCase k("PAD");
  k.input(DType::kInt8, {1, 2, 2, 1}, iota8(4), per_tensor(0.1f, -5))
      .input(DType::kInt32, {4, 2}, std::vector<int32_t>{0, 0, 1, 0, 0, 1, 0, 0})
      .output(DType::kInt8, {1, 3, 3, 1}, per_tensor(0.1f, -5));
  EXPECT_EQ(k.run<int8_t>(), (std::vector<int8_t>{-5, -5, -5, 1, 2, -5, 3, 4, -5}));
}

TEST(TfliteDataMovement, Transpose) {
  KernelCase k("TRANSPOSE");
  k.input(DType::kInt8, {2, 3}, iota8(6))
      .input(DType::kInt32, {2}, std::vector<int32_t>{1, 0})
      .output(DType::kInt8, {3, 2});
  EXPECT_EQ(k.run<int8_t>(), (std::vector<int8_t>{1, 4, 2, 5, 3, 6}));
}

TEST(TfliteDataMovement, StridedSliceMasksAndShrink) {
  // x = [[1 2 3 4] [5 6 7 8] [9 10 11 12]]; rows: begin masked, end 3, stride 2 → rows 0, 2;
  // columns: from -1 backwards to the start (end masked), stride -2 → columns 3, 1.
  KernelCase k("STRIDED_SLICE");
  k.input(DType::kInt8, {3, 4}, iota8(12))
      .input(DType::kInt32, {2}, std::vector<int32_t>{7, -1})
      .input(DType::kInt32, {2}, std::vector<int32_t>{3, 0})
      .input(DType::kInt32, {2}, std::vector<int32_t>{2, -2})
      .output(DType::kInt8, {2, 2})
      .attr("begin_mask", int64_t{1})
      .attr("end_mask", int64_t{2});
  EXPECT_EQ(k.run<int8_t>(), (std::vector<int8_t>{4, 2, 12, 10}));
  KernelCase shrink("STRIDED_SLICE");
  shrink.input(DType::kInt8, {3, 4}, iota8(12))
      .input(DType::kInt32, {2}, std::vector<int32_t>{1, 0})
      .input(DType::kInt32, {2}, std::vector<int32_t>{2, 4})
      .input(DType::kInt32, {2}, std::vector<int32_t>{1, 1})
      .output(DType::kInt8, {4})
      .attr("shrink_axis_mask", int64_t{1});
  EXPECT_EQ(shrink.run<int8_t>(), (std::vector<int8_t>{5, 6, 7, 8}));
}

TEST(TfliteDataMovement, ConcatenationRescalesAnInputOfOtherQuantization) {
  KernelCase k("CONCATENATION");
  k.input(DType::kInt8, {1, 2}, std::vector<int8_t>{10, -10}, per_tensor(0.5f, 0))
      .input(DType::kInt8, {1, 2}, std::vector<int8_t>{10, -11}, per_tensor(0.25f, 2))
      .output(DType::kInt8, {1, 4}, per_tensor(0.5f, 0))
      .attr("axis", int64_t{-1});
  // second input: 0.25 · (10 − 2) = 2 → 4; 0.25 · (−13) = −3.25 → −6.5 → −7 (half away from zero).
  EXPECT_EQ(k.run<int8_t>(), (std::vector<int8_t>{10, -10, 4, -7}));
}

TEST(TfliteDataMovement, ResizeNearestNeighborCoordinateRules) {
  auto resize = [](bool align, bool half) {
    KernelCase k("RESIZE_NEAREST_NEIGHBOR");
    k.input(DType::kInt8, {1, 1, 3, 1}, iota8(3))
        .input(DType::kInt32, {2}, std::vector<int32_t>{1, 5})
        .output(DType::kInt8, {1, 1, 5, 1})
        .attr("align_corners", int64_t{align})
        .attr("half_pixel_centers", int64_t{half});
    return k.run<int8_t>();
  };
  EXPECT_EQ(resize(false, false), (std::vector<int8_t>{1, 1, 2, 2, 3}));  // floor(x · 0.6)
  EXPECT_EQ(resize(true, false), (std::vector<int8_t>{1, 2, 2, 3, 3}));   // round(x · 0.5)
  EXPECT_EQ(resize(false, true), (std::vector<int8_t>{1, 1, 2, 3, 3}));   // floor((x + 0.5) · 0.6)
}

TEST(TfliteDataMovement, ReshapeCopiesOrKeepsTheBytes) {
  KernelCase k("RESHAPE");
  k.input(DType::kInt8, {2, 3}, iota8(6)).input(DType::kInt32, {1}, std::vector<int32_t>{6}).output(DType::kInt8, {6});
  EXPECT_EQ(k.run<int8_t>(), iota8(6));
}

}  // namespace
}  // namespace memledger::tflite_test
