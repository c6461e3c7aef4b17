// The memory ledger (DESIGN.md §4.2, P6, P8): per buffer and per category, logical and
// physical bytes; the live-at-once timeline; peak-live, the lower bound of any placement;
// and, once a placement exists, the arena and its fragmentation (arena − peak-live).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memledger/plan/liveness.h"

namespace memledger {

struct CategoryTotals {
  int64_t logical_bytes = 0;
  int64_t physical_bytes = 0;  // bytes the buffers own (an in-place alias owns none)
  int count = 0;
};

struct TimelineStep {
  int step = 0;
  NodeId node;
  std::string node_name;
  int64_t live_bytes = 0;         // storage in use at this step, aliases counted once
  std::vector<int> live_buffers;  // buffer indices live at this step, largest first
};

struct Ledger {
  int64_t logical_bytes = 0;   // every buffer's values with no padding
  int64_t physical_bytes = 0;  // every buffer's bytes under the layout contract
  std::map<BufferCategory, CategoryTotals> by_category;
  std::vector<TimelineStep> timeline;
  int64_t peak_live_bytes = 0;
  int peak_step = 0;
};

Ledger make_ledger(const Graph& graph, const Liveness& liveness);

}  // namespace memledger
