// The plan as a person reads it in a terminal: the ledger by category, the buffers, the
// live-at-once timeline, the biggest contributors at the peak, and whether it fits.
#pragma once

#include <string>

#include "memledger/device/profile.h"
#include "memledger/fit/schedule.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

struct TextReportOptions {
  bool buffers = true;         // the per-buffer table
  int max_timeline_rows = 60;  // longer timelines show the steps around the peak and the ends
  int contributors = 8;        // buffers listed at the peak step
  // How the order was chosen when it was searched (the graph reordered to it); null: the model's own.
  const ScheduleResult* schedule = nullptr;
};

std::string category_table(const MemoryPlan& plan);
std::string buffer_table(const MemoryPlan& plan);
std::string timeline_text(const MemoryPlan& plan, int max_rows);
std::string peak_contributors(const MemoryPlan& plan, int count);
// One line: peak-live, arena, lower bound, optimality, capacity and the verdict.
std::string plan_verdict(const MemoryPlan& plan);
// One line: whether peak-live counts the graph inputs, and peak-live with and without them.
std::string peak_inputs_line(const Ledger& ledger);
// One line: which execution order the plan is for, and the peak-live of each order.
std::string schedule_line(const ScheduleResult* schedule);
std::string text_report(const MemoryPlan& plan, const TextReportOptions& options = {});

}  // namespace memledger
