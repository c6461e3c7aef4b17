// The story `memledger demo` tells of the teaching example (DESIGN.md §5), every figure
// computed by the library: layouts, the four plans and the model a user brings, NPU traffic,
// the rewrite and its ledger diff; and the reports of one of its plans.
#pragma once

#include <string>

#include "memledger/device/profile.h"

namespace memledger::teaching {

// Sections 1–8 as `demo` prints them under `profile` (section 7 only with external memory).
std::string story_text(const DeviceProfile& profile);

// The plan `variant` names (expanded: the model a user brings; optimized: it after
// `optimize`; A–D: the plan variants) as `plan --html` / `--json` write a model's; an Error
// naming the variant otherwise.
std::string variant_report_html(const std::string& variant, const DeviceProfile& profile);
std::string variant_report_json(const std::string& variant, const DeviceProfile& profile);
// The model a user brings beside variant C, as `optimize --html` shows a rewrite.
std::string compare_report_html(const DeviceProfile& profile);

}  // namespace memledger::teaching
