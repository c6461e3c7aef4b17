// The JSON report of a plan (DESIGN.md §4.7, schema_version 2): what `plan --json` writes
// and what `diff` reads. Exact bytes everywhere; no human units. Version 2's timeline lists
// per step the buffers that start and end there (version 1 listed every live buffer at
// every step, quadratic in size); the ledger names the buffers live at the peak.
#pragma once

#include <string>

#include "memledger/device/profile.h"
#include "memledger/fit/schedule.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/sim/simulate.h"

namespace memledger {

inline constexpr int kReportSchemaVersion = 2;

// The report as JSON text (indented); `model` names the model file. With `sim`, the NPU
// simulation's report is included under "sim"; with `schedule`, how the order was searched
// (fit/schedule.h: the graph was reordered to it) under "schedule".
std::string plan_report_json(const Graph& graph, const MemoryPlan& plan, const DeviceProfile& profile,
                             const std::string& model, const sim::SimReport* sim = nullptr,
                             const ScheduleResult* schedule = nullptr);

}  // namespace memledger
