// The figure fit screens every candidate by (issue 34, item 1): peak-live under the same
// liveness and ledger as `plan`, without placing anything (placement is the costly part).
// One definition for the memory-aware schedule, the patch searches and the fit's strategies,
// so that a candidate screened as reaching the capacity is planned with the same figure.
#pragma once

#include <cstdint>
#include <vector>

#include "memledger/device/profile.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/ledger.h"
#include "memledger/plan/liveness.h"

namespace memledger {

// The ledger of `graph` in its own order (per step: the bytes live; and the peak).
Ledger screening_ledger(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options);

// Peak-live of `graph` in its own order.
int64_t peak_live(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options);

// Peak-live of `graph` run in `order` (a topological order of its live nodes).
int64_t peak_live_of_order(const Graph& graph, const std::vector<NodeId>& order, const DeviceProfile& profile,
                           const PlanOptions& options = {});

}  // namespace memledger
