// The DMA cost of moving part of a tensor between external and local memory (NPU mode,
// DESIGN.md P10). A transfer is one contiguous byte range of the tensor's external layout;
// the layout contract says where the ranges are, so a tile of whole rows moves whole
// aligned runs (padding included) while a tile cut inside a run moves one range per run.
#pragma once

#include <cstdint>
#include <span>

#include "memledger/core/layout.h"
#include "memledger/device/profile.h"

namespace memledger::sim {

struct Traffic {
  int64_t transfers = 0;
  int64_t payload_bytes = 0;  // the contiguous ranges' bytes, before rounding to the DMA granularity
  int64_t bytes = 0;          // what the DMA moves: each transfer rounded up to the granularity
  double cycles = 0;          // transfers × setup_cycles + bytes / bytes_per_cycle

  Traffic& operator+=(const Traffic& other);
};
Traffic operator+(Traffic a, const Traffic& b);

// The contiguous ranges that hold a box of a tensor: `box` gives the box's extent on each
// logical axis. Axes inside the innermost partially covered physical axis are whole, so
// one range spans that axis's covered extent times its stride; the axes outside it
// multiply the number of ranges.
struct BoxRanges {
  int64_t count = 0;       // number of contiguous ranges
  int64_t bytes_each = 0;  // bytes of each (bits rounded up to whole bytes)
};
BoxRanges box_ranges(const Layout& layout, std::span<const int64_t> box);

// The traffic of moving `ranges` `times` times under `dma`.
Traffic dma_traffic(const DmaProfile& dma, const BoxRanges& ranges, int64_t times = 1);

// The ideal: `bytes` moved in `transfers` transfers with no rounding (every byte once).
Traffic ideal_traffic(const DmaProfile& dma, int64_t bytes, int64_t transfers);

}  // namespace memledger::sim
