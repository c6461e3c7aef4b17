// The lower bound of any placement: the largest sum of sizes live at one step (peak-live),
// and the highest end a fixed offset demands. Computed by a sweep over lifetimes: linear where
// the steps are dense (at most four per buffer), O(n log n) otherwise.
#pragma once

#include <cstdint>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

struct LowerBound {
  int64_t bytes = 0;            // max(peak_live_bytes, max fixed end); no arena is smaller
  int64_t peak_live_bytes = 0;  // the largest sum of sizes live at one step
  int64_t peak_step = 0;        // the first step at which peak_live_bytes is live
};

LowerBound lower_bound(const Problem& problem);

}  // namespace memledger::allocate
