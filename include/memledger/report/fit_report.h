// The report of `memledger fit` (issue 13, item 5): each step tried — peak-live, arena, extra
// multiply-accumulates, planning time, whether it was kept — the verdict, and when the model
// does not fit, what is live at the peak of the best plan reached. Text for the terminal,
// JSON (the steps plus the final plan's report, schema_version 1) for tools.
#pragma once

#include <string>

#include "memledger/device/profile.h"
#include "memledger/fit/fit.h"

namespace memledger {

std::string fit_report_text(const FitResult& fit, const DeviceProfile& profile);
// One line: fits or not, the step the plan comes from, its arena against the capacity.
std::string fit_verdict(const FitResult& fit, const DeviceProfile& profile);
std::string fit_report_json(const FitResult& fit, const DeviceProfile& profile, const std::string& model);

}  // namespace memledger
