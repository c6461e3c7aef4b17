// `memledger diff`: how two plan reports (JSON, DESIGN.md §4.7) differ in logical,
// physical and peak-live bytes, and why (P8).
//
// Attribution rule. Each figure is split into three sums over buffers, and a change is the
// change of each sum, so the parts add up to the total by construction:
//   constants  = logical bytes of constant buffers            ("constants shrank")
//   layout     = physical − logical bytes of owning buffers   ("layout/padding changed")
//   lifetimes  = logical bytes of every other buffer          ("lifetimes shortened":
//                activations and workspaces that are gone, smaller, or share storage)
// Logical bytes use every buffer and have no layout part. Physical bytes use owning
// buffers only (an in-place alias owns none: reuse shows as lifetimes). Peak-live uses the
// owning buffers live at the peak step of each report. Whatever of a report's figure the
// buffers do not explain (a report without buffers, say) is counted under lifetimes.
#pragma once

#include <cstdint>
#include <string>

#include "memledger/plan/memory_plan.h"

namespace memledger {

struct FigureChange {
  int64_t before = 0;
  int64_t after = 0;
  int64_t constants = 0;
  int64_t layout = 0;
  int64_t lifetimes = 0;
  int64_t total() const { return after - before; }  // = constants + layout + lifetimes
};

struct ReportDiff {
  std::string model_before, model_after;
  FigureChange logical, physical, peak_live;
};

// Parses two JSON reports; an Error naming `before_name`/`after_name` and the field when
// one is malformed.
ReportDiff diff_reports(const std::string& before_json, const std::string& after_json,
                        const std::string& before_name = "before", const std::string& after_name = "after");

// The same from the plans themselves (no JSON in between); the names stand for the models.
ReportDiff diff_plans(const MemoryPlan& before, const MemoryPlan& after, const std::string& before_name = "before",
                      const std::string& after_name = "after");

// A small table: figure, before, after, change, and its three parts.
std::string format_diff(const ReportDiff& diff);

}  // namespace memledger
