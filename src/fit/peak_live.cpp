#include "memledger/fit/peak_live.h"

namespace memledger {

Ledger screening_ledger(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options) {
  return make_ledger(graph, compute_liveness(graph, profile, options));
}

int64_t peak_live(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options) {
  return screening_ledger(graph, profile, options).peak_live_bytes;
}

int64_t peak_live_of_order(const Graph& graph, const std::vector<NodeId>& order, const DeviceProfile& profile,
                           const PlanOptions& options) {
  Graph reordered = graph;
  reordered.set_order(order);
  return peak_live(reordered, profile, options);
}

}  // namespace memledger
