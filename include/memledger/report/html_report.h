// The plan as one self-contained HTML page (DESIGN.md §4.7 `--html`): the arena as a
// time × address picture, the live-at-once curve with the peak and the capacity, the
// ledger by category, the biggest buffers at the peak and the verdict. No network, no
// external assets, no script: inline CSS and SVG only, so the file opens anywhere.
// Human units in the text; exact bytes in tooltips and data-* attributes.
#pragma once

#include <string>

#include "memledger/device/profile.h"
#include "memledger/fit/schedule.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

// One planned model as a report shows it; the references must outlive the call.
struct ReportSubject {
  const Graph& graph;
  const MemoryPlan& plan;
  const DeviceProfile& profile;
  std::string model;                         // the model's file or name, shown in the title
  const ScheduleResult* schedule = nullptr;  // how the order was chosen, when it was searched
};

// The report of one plan. Stable hooks for tests and tools: one `rect.buf` per buffer
// inside `svg#arena` (data-name, data-category, data-logical, data-physical, data-first,
// data-last, data-offset, data-alias), and `#peak-label` with data-bytes = peak-live.
// With `schedule`, the order was searched (fit/schedule.h) and the graph reordered to it.
std::string plan_report_html(const Graph& graph, const MemoryPlan& plan, const DeviceProfile& profile,
                             const std::string& model_name, const ScheduleResult* schedule = nullptr);

// Before and after side by side (what `optimize --html` writes), drawn on one byte scale
// so the pictures compare by eye. The hooks above carry the prefixes `before-` and
// `after-` (svg#before-arena, #after-peak-label).
std::string compare_report_html(const ReportSubject& before, const ReportSubject& after);

}  // namespace memledger
