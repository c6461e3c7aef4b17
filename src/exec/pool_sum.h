// The order in which a global average pool adds, shared by the reference GlobalAveragePool
// and memledger.AccumulatePool (ir/accumulate_pool.h): float64, element after element of a
// plane in row-major order, the mean rounded to float32 once. A pool computed strip by
// strip, each strip's sums carried into the next, is then the whole pool, bit for bit.
#pragma once

#include <cstdint>

namespace memledger::exec {

inline double add_plane(double sum, const float* plane, int64_t elements) {
  for (int64_t i = 0; i < elements; ++i) sum += plane[i];
  return sum;
}

inline float plane_mean(double sum, int64_t count) { return static_cast<float>(sum / static_cast<double>(count)); }

}  // namespace memledger::exec
