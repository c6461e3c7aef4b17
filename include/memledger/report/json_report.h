// The JSON report of a plan (DESIGN.md §4.7, schema_version 1): what `plan --json` writes
// and what `diff` reads. Exact bytes everywhere; no human units.
#pragma once

#include <string>

#include "memledger/device/profile.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/sim/simulate.h"

namespace memledger {

inline constexpr int kReportSchemaVersion = 1;

// The report as JSON text (indented); `model` names the model file. With `sim`, the NPU
// simulation's report is included under "sim".
std::string plan_report_json(const Graph& graph, const MemoryPlan& plan, const DeviceProfile& profile,
                             const std::string& model, const sim::SimReport* sim = nullptr);

}  // namespace memledger
