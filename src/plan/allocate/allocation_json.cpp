#include "memledger/plan/allocate/allocation_json.h"
#include "core/json_text.h"

#include <nlohmann/json.hpp>

namespace memledger::allocate {

std::string allocation_json(const Problem& problem, const Allocation& allocation, std::string_view source) {
  using nlohmann::json;
  json doc;
  doc["schema"] = "memledger.allocate/1";
  doc["problem"] = {{"source", std::string(source)}, {"buffers", problem.buffers.size()}};
  doc["lower_bound"] = {{"bytes", allocation.bound.bytes},
                        {"peak_live_bytes", allocation.bound.peak_live_bytes},
                        {"peak_step", allocation.bound.peak_step}};
  json runs = json::array();
  for (const PlannerRun& run : allocation.runs) {
    json r = {{"planner", to_string(run.algorithm)},
              {"algorithm", run.solution.algorithm},
              {"arena_bytes", run.solution.arena_bytes},
              {"optimal", run.solution.optimal},
              {"seconds", run.seconds}};
    if (run.exact) {
      const ExactStats& e = *run.exact;
      json over_time = json::array();
      for (const ExactImprovement& i : e.best_over_time) {
        over_time.push_back({{"seconds", i.seconds}, {"arena_bytes", i.arena_bytes}, {"nodes", i.nodes}});
      }
      r["search"] = {{"searched", e.searched},     {"nodes", e.nodes},         {"restarts", e.restarts},
                     {"probes", e.probes},         {"timed_out", e.timed_out}, {"proven_bound_bytes", e.proven_bound},
                     {"best_over_time", over_time}};
    }
    runs.push_back(std::move(r));
  }
  doc["runs"] = std::move(runs);
  doc["arena_bytes"] = allocation.best.arena_bytes;
  doc["algorithm"] = allocation.best.algorithm;
  doc["optimal"] = allocation.best.optimal;
  doc["proven_bound_bytes"] = allocation.proven_bound;
  doc["capacity_bytes"] = allocation.capacity ? json(*allocation.capacity) : json(nullptr);
  doc["verdict"] = to_string(allocation.verdict);
  return json_text(doc) + "\n";
}

}  // namespace memledger::allocate
