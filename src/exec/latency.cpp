#include "memledger/exec/latency.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <vector>

#include "memledger/core/error.h"

namespace memledger {

LatencyStats time_runs(int repeat, const std::function<void()>& once) {
  ML_CHECK(repeat >= 1, "{} timed runs", repeat);
  once();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    once();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  return {.runs = repeat,
          .median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2,
          .min_ms = ms.front(),
          .max_ms = ms.back(),
          .mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(n)};
}

}  // namespace memledger
