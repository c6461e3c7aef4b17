// When a problem's steps are dense enough to index an array by step instead of sorting: the
// span of steps at most four per item (operator indices are, a few per buffer). Used by the
// lower bound's difference array and the greedy sweep's counting sort.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memledger::allocate {

constexpr uint64_t kDenseStepsPerItem = 4;

// `span` = last step − first step (as unsigned: no wrap when last >= first).
inline bool steps_are_dense(uint64_t span, size_t items) {
  return span <= kDenseStepsPerItem * static_cast<uint64_t>(items);
}

}  // namespace memledger::allocate
