#include "exec/fast/parallel.h"

#include <omp.h>

#include <algorithm>

namespace memledger::exec::fast {

int loop_threads(int64_t count, int64_t grain, int cap) {
  const int threads = std::min(omp_get_max_threads(), cap);
  if (threads <= 1 || count < 2 * grain) return 1;
  return static_cast<int>(std::min<int64_t>(threads, count / grain));
}

void parallel_ranges(int64_t count, int64_t grain, const std::function<void(int64_t, int64_t, int)>& body, int cap) {
  const int threads = loop_threads(count, grain, cap);
  if (threads == 1) {
    if (count > 0) body(0, count, 0);
    return;
  }
  const int64_t grains = (count + grain - 1) / grain;
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const int64_t begin = std::min(count, grains * t / n * grain);
    const int64_t end = std::min(count, grains * (t + 1) / n * grain);
    if (begin < end) body(begin, end, static_cast<int>(t));
  }
}

}  // namespace memledger::exec::fast
