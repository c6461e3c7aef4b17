#include "memledger/report/optimize_report.h"
#include "core/json_text.h"

#include <nlohmann/json.hpp>

#include "memledger/report/json_report.h"

namespace memledger {

std::string optimize_report_json(const OptimizeResult& result, const Graph& original, const MemoryPlan& before,
                                 const MemoryPlan& after, const DeviceProfile& profile, const std::string& model,
                                 const std::string& output) {
  nlohmann::json report{{"schema_version", 1}, {"model", model}, {"output", output}};
  report["passes"] = nlohmann::json::array();
  for (const PipelineStep& s : result.steps)
    report["passes"].push_back(
        {{"name", s.pass}, {"nodes_rewritten", s.result.nodes_rewritten}, {"bytes_saved", s.result.bytes_saved}});
  report["lowered"] = result.lowered;
  report["verification"] = {{"ok", result.verification.ok},
                            {"max_abs", result.verification.max_abs},
                            {"max_rel", result.verification.max_rel},
                            {"kernels", kernel_set_name(result.verification.kernels)}};
  report["before"] = nlohmann::json::parse(plan_report_json(original, before, profile, model));
  report["after"] = nlohmann::json::parse(plan_report_json(result.graph, after, profile, output));
  return json_text(report) + "\n";
}

}  // namespace memledger
