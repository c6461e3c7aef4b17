#include "memledger/sim/dma.h"

#include "memledger/core/checked.h"
#include "memledger/core/error.h"

namespace memledger::sim {

Traffic& Traffic::operator+=(const Traffic& other) {
  transfers += other.transfers;
  payload_bytes += other.payload_bytes;
  bytes += other.bytes;
  cycles += other.cycles;
  return *this;
}

Traffic operator+(Traffic a, const Traffic& b) { return a += b; }

BoxRanges box_ranges(const Layout& layout, std::span<const int64_t> box) {
  ML_CHECK(static_cast<int>(box.size()) == layout.rank(), "box of rank {} for a layout of rank {}", box.size(),
           layout.rank());
  const Shape& shape = layout.shape();
  for (int axis = 0; axis < layout.rank(); ++axis)
    ML_CHECK(box[axis] >= 0 && box[axis] <= shape[axis], "box extent {} outside [0,{}]", box[axis], shape[axis]);
  for (int64_t extent : box)
    if (extent == 0) return {};
  const std::vector<int>& order = layout.physical_order();
  // The innermost physical axis the box covers only in part; everything inside it is whole.
  int partial = -1;
  for (int i = layout.rank() - 1; i >= 0; --i) {
    if (box[order[i]] != shape[order[i]]) {
      partial = i;
      break;
    }
  }
  if (partial < 0) return {1, layout.bytes()};
  const int axis = order[partial];
  int64_t count = 1;
  for (int i = 0; i < partial; ++i) count *= box[order[i]];
  const int64_t bits = box[axis] * layout.strides_bits()[axis];
  return {count, ceil_div(bits, 8)};
}

Traffic dma_traffic(const DmaProfile& dma, const BoxRanges& ranges, int64_t times) {
  const int64_t granularity = std::max<int64_t>(dma.granularity_bytes, 1);
  Traffic t;
  t.transfers = checked_mul(ranges.count, times, "DMA transfers");
  t.payload_bytes = checked_mul(checked_mul(ranges.count, ranges.bytes_each, "DMA payload"), times, "DMA payload");
  t.bytes = checked_mul(t.transfers, align_up(ranges.bytes_each, granularity, "DMA transfer"), "DMA traffic");
  t.cycles = static_cast<double>(t.transfers) * static_cast<double>(dma.setup_cycles) +
             static_cast<double>(t.bytes) / dma.bytes_per_cycle;
  return t;
}

Traffic ideal_traffic(const DmaProfile& dma, int64_t bytes, int64_t transfers) {
  Traffic t;
  t.transfers = transfers;
  t.payload_bytes = bytes;
  t.bytes = bytes;
  t.cycles = static_cast<double>(transfers) * static_cast<double>(dma.setup_cycles) +
             static_cast<double>(bytes) / dma.bytes_per_cycle;
  return t;
}

}  // namespace memledger::sim
