// Memory-aware scheduling (DESIGN.md §2, issue 13 item 2): a topological
// order of the graph's nodes that minimises peak-live, the figure the ledger computes.
//
// The search runs over sets of scheduled nodes (Serenity's dynamic programming over
// "ready/scheduled" sets): memory after a set of nodes has run does not depend on the
// order they ran in, so the lowest peak with which each set can be reached is enough to
// extend it, level by level (one more node each time), and two orders reaching the same
// set merge. A branch whose peak already reaches the best known complete order is cut, and
// a ready node that runs without raising the peak so far and leaves no more bytes live is
// taken at once (never worse: moving it earlier lowers or keeps every step in between).
// Two beam searches (512 sets per level) give the first bound; where a level of the exact
// search has more sets than it may hold, or the time budget is spent, the best sets by
// (peak, memory) are kept and the result is a heuristic.
// Graphs that are chains of small branching regions (GoogLeNet's inception modules,
// DenseNet's dense layers) have few sets per level, since every set holds the whole region
// before a node all later ones depend on: such graphs are solved exactly.
//
// The search's memory model is incremental and never above the ledger's figure (it takes
// an in-place output's bytes as its own, not its root's); every candidate order is then
// planned by the same liveness and ledger as `plan`, and that figure is the one reported.
// The model's own order is always a candidate, so the result is never worse than it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memledger/device/profile.h"
#include "memledger/fit/peak_live.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/liveness.h"

namespace memledger {

enum class ScheduleKind { kModel, kMemory };
std::string_view to_string(ScheduleKind kind);
// "model" or "memory"; an Error naming the value otherwise.
ScheduleKind parse_schedule_kind(std::string_view text);

struct ScheduleOptions {
  double time_budget_seconds = 1.0;  // for the exact search; the heuristic always finishes
  PlanOptions plan;                  // in-place rules and donation, as the plan will use them
  // Sets the exact search may hold at one level before it turns into a beam search.
  int64_t max_states_per_level = 200000;
};

struct ScheduleResult {
  std::vector<NodeId> order;
  int64_t peak_live_bytes = 0;         // the ledger's peak-live of `order`
  int64_t model_order_peak_bytes = 0;  // the ledger's peak-live of the graph's own order
  bool optimal = false;                // no topological order has a lower peak-live
  // "exact-dp" (the search completed), "heuristic" (beam search), or "model" (nothing
  // found below the model's order, which is kept).
  std::string method;
  int64_t states = 0;  // sets of scheduled nodes the searches visited
  double seconds = 0;  // time spent, the ledger's figures included
};

ScheduleResult memory_aware_schedule(const Graph& graph, const DeviceProfile& profile,
                                     const ScheduleOptions& options = {});

}  // namespace memledger
