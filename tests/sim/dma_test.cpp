// The contiguous ranges of a tile in the external layout and their DMA cost, on the
// teaching example's x = [1,12,20,28] int8, NHWC, 16-byte aligned pixels (pixel stride 16,
// row stride 28 × 16 = 448, 8960 bytes in all).
#include <gtest/gtest.h>

#include "memledger/device/tensor_layout.h"
#include "memledger/sim/dma.h"
#include "memledger/teaching/example.h"

namespace memledger::sim {
namespace {

Layout teaching_x(const DeviceProfile& p) {
  return tensor_layout(p, teaching::input_shape(), teaching::model_dtype(), teaching::input_roles());
}

TEST(BoxRanges, WholeTensorIsOneRange) {
  const Layout x = teaching_x(builtin_profile("teaching"));
  const std::vector<int64_t> box{1, 12, 20, 28};
  const BoxRanges r = box_ranges(x, box);
  EXPECT_EQ(r.count, 1);
  EXPECT_EQ(r.bytes_each, 8960);
}

TEST(BoxRanges, RowsMoveWholeAlignedRuns) {
  const Layout x = teaching_x(builtin_profile("teaching"));
  // 10 whole rows: W and C are whole, so one range of 10 × 448 = 4480 bytes (padding included).
  const std::vector<int64_t> rows{1, 12, 10, 28};
  EXPECT_EQ(box_ranges(x, rows).count, 1);
  EXPECT_EQ(box_ranges(x, rows).bytes_each, 4480);
  // Half a row: one range of 14 pixels × 16 = 224 bytes.
  const std::vector<int64_t> half_row{1, 12, 1, 14};
  EXPECT_EQ(box_ranges(x, half_row).count, 1);
  EXPECT_EQ(box_ranges(x, half_row).bytes_each, 224);
  // 2 rows × 14 pixels: one range per row.
  const std::vector<int64_t> block{1, 12, 2, 14};
  EXPECT_EQ(box_ranges(x, block).count, 2);
  EXPECT_EQ(box_ranges(x, block).bytes_each, 224);
}

TEST(BoxRanges, ChannelBlockIsOneRangePerPixel) {
  const Layout x = teaching_x(builtin_profile("teaching"));
  // 4 of 12 channels: C is innermost, so 20 × 28 = 560 ranges of 4 bytes each.
  const std::vector<int64_t> box{1, 4, 20, 28};
  const BoxRanges r = box_ranges(x, box);
  EXPECT_EQ(r.count, 560);
  EXPECT_EQ(r.bytes_each, 4);
}

TEST(BoxRanges, RowRuleForOneChannel) {
  // C = 1 merges into rows of W: align_up(28, 16) = 32 bytes per row; 5 rows = 160 bytes.
  const DeviceProfile p = builtin_profile("teaching");
  const Layout x = tensor_layout(p, {1, 1, 20, 28}, DType::kInt8, teaching::input_roles());
  const std::vector<int64_t> rows{1, 1, 5, 28};
  EXPECT_EQ(box_ranges(x, rows).count, 1);
  EXPECT_EQ(box_ranges(x, rows).bytes_each, 160);
}

TEST(DmaTraffic, GranularitySetupAndBandwidth) {
  const DeviceProfile p = builtin_profile("teaching");  // 16 B granularity, 32 setup cycles, 8 B/cycle
  // 2 transfers of 4480 bytes: 2 × 32 + 8960 / 8 = 64 + 1120 = 1184 cycles.
  const Traffic rows = dma_traffic(p.dma, {1, 4480}, 2);
  EXPECT_EQ(rows.transfers, 2);
  EXPECT_EQ(rows.bytes, 8960);
  EXPECT_DOUBLE_EQ(rows.cycles, 1184);
  // 560 transfers of 4 bytes each move 16 bytes each: 8960 bytes for 2240 bytes of payload,
  // 560 × 32 + 8960 / 8 = 17920 + 1120 = 19040 cycles.
  const Traffic pixels = dma_traffic(p.dma, {560, 4});
  EXPECT_EQ(pixels.payload_bytes, 2240);
  EXPECT_EQ(pixels.bytes, 8960);
  EXPECT_DOUBLE_EQ(pixels.cycles, 19040);
}

}  // namespace
}  // namespace memledger::sim
