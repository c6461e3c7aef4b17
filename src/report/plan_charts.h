// The two charts of a plan in the HTML reports, drawn with svg_plot: the arena as a time ×
// address picture (one rectangle per buffer) and the live-at-once curve (one bar per step
// of the ledger's timeline, stacked by category), each with the arena and capacity lines.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "memledger/plan/memory_plan.h"
#include "memledger/report/html_report.h"

namespace memledger::report {

// The order categories are listed in, bottom to top in the stacked curve.
inline constexpr std::array kCategories = {BufferCategory::kInput,      BufferCategory::kConstant,
                                           BufferCategory::kActivation, BufferCategory::kWorkspace,
                                           BufferCategory::kOutput,     BufferCategory::kPersistent};

// The byte range an axis shows: the figures that matter, and the capacity when it is near
// enough (4×) not to flatten everything else.
int64_t axis_max(int64_t figures, int64_t capacity);

// Where a chart's byte axis breaks (0: no break), so that storage live for the whole
// program (resident weights) does not flatten what changes from step to step. The arena:
// the addresses below the lowest buffer that does not live for the whole program; the
// curve: the bytes live at every step. Either only when at least half of `ymax`.
int64_t arena_split(const MemoryPlan& plan, int64_t ymax);
int64_t live_split(const MemoryPlan& plan, int64_t ymax);

// The arena picture, `svg#<id>`: one `rect.buf` per buffer in the arena, with data-name,
// data-category, data-logical, data-physical, data-first, data-last, data-offset and
// data-alias; the peak step's band; names where they fit.
std::string arena_svg(const ReportSubject& s, std::string_view id, int64_t ymax, int64_t split, double width);

// The live-at-once curve, `svg#<id>`: one `g.step` per step (data-step, data-live), the
// peak's label `#<prefix>peak-label` (data-bytes = peak-live) where `id` is "<prefix>live".
std::string live_svg(const ReportSubject& s, std::string_view id, int64_t ymax, int64_t split, double width);

}  // namespace memledger::report
