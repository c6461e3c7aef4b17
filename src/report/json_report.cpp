#include "memledger/report/json_report.h"
#include "core/json_text.h"

#include <nlohmann/json.hpp>

#include "memledger/report/bank_report.h"
#include "memledger/sim/sim_report.h"

namespace memledger {

std::string plan_report_json(const Graph& graph, const MemoryPlan& plan, const DeviceProfile& profile,
                             const std::string& model, const sim::SimReport* sim, const ScheduleResult* schedule) {
  using nlohmann::json;
  json by_category = json::object();
  for (const auto& [category, t] : plan.ledger.by_category)
    by_category[std::string(to_string(category))] = {{"logical_bytes", t.logical_bytes},
                                                     {"physical_bytes", t.physical_bytes},
                                                     {"external_bytes", t.external_bytes},
                                                     {"count", t.count}};

  json buffers = json::array();
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const auto& b = plan.liveness.buffers[i];
    json entry = {
        {"name", b.name},
        {"category", std::string(to_string(b.category))},
        {"logical_bytes", b.logical_bytes},
        {"physical_bytes", b.physical_bytes},
        {"first_step", b.first_step},
        {"last_step", b.last_step},
        {"offset", b.external ? json() : json(plan.offsets[i])},
        {"external", b.external},
        {"alias_of", b.alias_of ? json(plan.liveness.buffers[static_cast<size_t>(*b.alias_of)].name) : json()}};
    if (b.value.valid()) {
      const Value& v = graph.value(b.value);
      entry["dtype"] = std::string(dtype_name(v.dtype));
      entry["shape"] = v.shape;
    }
    buffers.push_back(std::move(entry));
  }

  const auto names = [&](const std::vector<int>& indices) {
    json list = json::array();
    for (int b : indices) list.push_back(plan.liveness.buffers[static_cast<size_t>(b)].name);
    return list;
  };
  // Per step what changes, not all that is live: linear in the model (schema 2).
  json timeline = json::array();
  for (const auto& step : plan.ledger.timeline)
    timeline.push_back({{"step", step.step},
                        {"node", step.node_name},
                        {"live_bytes", step.live_bytes},
                        {"live_count", step.live_count},
                        {"starts", names(step.starts)},
                        {"ends", names(step.ends)}});
  const json live_at_peak =
      plan.ledger.timeline.empty() ? json::array() : names(live_buffers_at(plan.liveness, plan.ledger.peak_step));

  json order = {
      {"order", schedule && schedule->peak_live_bytes < schedule->model_order_peak_bytes ? "memory" : "model"},
      {"searched", schedule != nullptr}};
  if (schedule) {
    const ScheduleResult& s = *schedule;
    order["method"] = s.method;
    order["optimal"] = s.optimal;
    order["peak_live_bytes"] = s.peak_live_bytes;
    order["model_order_peak_bytes"] = s.model_order_peak_bytes;
    order["seconds"] = s.seconds;
    order["states"] = s.states;
    json nodes = json::array();
    for (NodeId n : s.order) nodes.push_back(graph.node(n).name.empty() ? graph.node(n).label() : graph.node(n).name);
    order["nodes"] = nodes;
  }

  json report = {{"schema_version", kReportSchemaVersion},
                 {"model", model},
                 {"device",
                  {{"name", profile.name},
                   {"capacity_bytes", profile.capacity_bytes},
                   {"alignment_bytes", profile.alignment_bytes},
                   {"constants", std::string(to_string(profile.constants))},
                   {"inputs", std::string(to_string(profile.inputs))}}},
                 {"ledger",
                  {{"logical_bytes", plan.ledger.logical_bytes},
                   {"physical_bytes", plan.ledger.physical_bytes},
                   {"external_bytes", plan.ledger.external_bytes},
                   {"peak_live_bytes", plan.ledger.peak_live_bytes},
                   {"peak_live_counts_inputs", plan.ledger.inputs_in_arena},
                   {"peak_live_with_inputs_bytes", plan.ledger.peak_live_with_inputs_bytes},
                   {"peak_live_without_inputs_bytes", plan.ledger.peak_live_without_inputs_bytes},
                   {"peak_step", plan.ledger.peak_step},
                   {"live_at_peak", live_at_peak},
                   {"by_category", by_category}}},
                 {"plan",
                  {{"algorithm", plan.algorithm},
                   {"arena_bytes", plan.arena_bytes},
                   {"head_bytes", plan.head_bytes},
                   {"persistent_bytes", plan.persistent_bytes},
                   {"lower_bound_bytes", plan.lower_bound_bytes},
                   {"fragmentation_bytes", plan.arena_bytes - plan.ledger.peak_live_bytes},
                   {"optimal", plan.optimal},
                   {"fits", plan.fits}}},
                 {"schedule", order},
                 {"buffers", buffers},
                 {"timeline", timeline}};
  if (sim) report["sim"] = json::parse(sim::sim_report_json(*sim));
  add_banks_json(report, plan);
  return json_text(report) + "\n";
}

}  // namespace memledger
