// The NPU-mode report as text (per operator: tiles, local peak, traffic and its ratio to
// the ideal; then the totals and the compact/expanded parameter figures) and as the JSON
// object that `plan --sim --json` puts under "sim".
#pragma once

#include <string>

#include "memledger/sim/simulate.h"

namespace memledger::sim {

std::string sim_report_text(const SimReport& report);
// A JSON object (schema in docs/npu-mode.md), exact integers for every byte figure.
std::string sim_report_json(const SimReport& report);

}  // namespace memledger::sim
