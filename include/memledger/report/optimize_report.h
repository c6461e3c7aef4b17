// The JSON report of `memledger optimize` (schema_version 1): the passes with their
// statistics, what was lowered, the verification's figures, and the plan reports of the
// model before and after (report/json_report.h's schema) under one device.
#pragma once

#include <string>

#include "memledger/device/profile.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/verify/optimize.h"

namespace memledger {

std::string optimize_report_json(const OptimizeResult& result, const Graph& original, const MemoryPlan& before,
                                 const MemoryPlan& after, const DeviceProfile& profile, const std::string& model,
                                 const std::string& output);

}  // namespace memledger
