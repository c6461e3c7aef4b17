// Timing repeated runs, onnxruntime perf-tool style: one warm-up, then N timed runs, their
// median and spread (`run --repeat`, the latency benchmarks).
#pragma once

#include <functional>

namespace memledger {

struct LatencyStats {
  int runs = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0;
};

// `once` run 1 + repeat times; the last `repeat` are timed (wall clock). repeat ≥ 1.
LatencyStats time_runs(int repeat, const std::function<void()>& once);

}  // namespace memledger
