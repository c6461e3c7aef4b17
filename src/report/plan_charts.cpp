#include "plan_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "memledger/report/units.h"
#include "names.h"
#include "svg_plot.h"

namespace memledger::report {
namespace {

// Below this many steps everything spans "the whole program": no split.
constexpr int kMinStepsToSplit = 4;

bool whole_program(const MemoryPlan& plan, std::pair<int, int> interval) {
  return interval.first == 0 && interval.second == plan.liveness.steps() - 1;
}

// The ledger's bytes live at each step by the owner's category, the storage that lives
// for the whole program apart (at the bottom of every bar) where the curve may split.
struct LiveStack {
  std::array<int64_t, kCategories.size()> resident{};
  std::vector<std::array<int64_t, kCategories.size()>> transient;  // per step of the timeline
  int64_t resident_total() const {
    int64_t total = 0;
    for (int64_t b : resident) total += b;
    return total;
  }
};

LiveStack live_stack(const Ledger& ledger, int steps) {
  LiveStack stack;
  const bool split = steps >= kMinStepsToSplit;
  for (size_t c = 0; c < kCategories.size(); ++c)
    if (const auto it = ledger.whole_program_by_category.find(kCategories[c]);
        split && it != ledger.whole_program_by_category.end())
      stack.resident[c] = it->second;
  stack.transient.resize(ledger.timeline.size());
  for (size_t step = 0; step < ledger.timeline.size(); ++step)
    for (size_t c = 0; c < kCategories.size(); ++c)
      if (const auto it = ledger.timeline[step].live_by_category.find(kCategories[c]);
          it != ledger.timeline[step].live_by_category.end())
        stack.transient[step][c] = it->second - stack.resident[c];
  return stack;
}

std::vector<std::string_view> step_names(const Ledger& ledger) {
  std::vector<std::string_view> names;
  for (const TimelineStep& t : ledger.timeline) names.push_back(t.node_name);
  return names;
}

// The arena and capacity lines of a chart; the arena's label moves out of the way of the
// capacity's and of the peak band's.
std::string plan_lines(const Frame& f, const MemoryPlan& plan, bool show_arena, bool peak_band_left) {
  std::string out;
  const bool capacity_line = plan.capacity_bytes > 0 && plan.capacity_bytes <= f.ymax;
  if (show_arena && plan.arena_bytes > 0) {
    const bool right = !capacity_line;
    const bool crowded_top = f.y(plan.arena_bytes) - f.top < 16 && (right || peak_band_left);
    const bool near_capacity =
        capacity_line && std::abs(f.y(plan.arena_bytes) - f.y(plan.capacity_bytes)) < 16 && right;
    out += marker_line(f, plan.arena_bytes, "arena-line", "arena " + human_bytes(plan.arena_bytes), right,
                       crowded_top || near_capacity);
  }
  if (capacity_line)
    out += marker_line(f, plan.capacity_bytes, "capacity-line", "capacity " + human_bytes(plan.capacity_bytes), true);
  else if (plan.capacity_bytes > 0)
    out += note_above(f, plan.capacity_bytes, "capacity-note",
                      "capacity " + human_bytes(plan.capacity_bytes) + " is far above this chart ↑");
  return out;
}

std::string buffer_tooltip(const ReportSubject& s, size_t i) {
  const LiveBuffer& b = s.plan.liveness.buffers[i];
  std::string text =
      fmt::format("{} ({})\nlogical {} · physical {}\nsteps {}–{} · {}", b.name, to_string(b.category),
                  exact_bytes(b.logical_bytes), exact_bytes(b.physical_bytes), b.first_step, b.last_step,
                  b.external ? std::string("outside the arena") : fmt::format("offset {}", s.plan.offsets[i]));
  if (b.value.valid()) {
    const Value& v = s.graph.value(b.value);
    text += fmt::format("\n{} {}", dtype_name(v.dtype), shape_to_string(v.shape));
  }
  if (b.alias_of)
    text += fmt::format("\nwritten in place over {}", s.plan.liveness.buffers[static_cast<size_t>(*b.alias_of)].name);
  return escape(text);
}

// Stripes of each category's colour, for in-place outputs drawn over their root.
std::string hatch_patterns(std::string_view id) {
  std::string out = "<defs>";
  for (BufferCategory c : kCategories)
    out += fmt::format(R"(<pattern id="{}-hatch-{}" width="7" height="7" patternUnits="userSpaceOnUse" )"
                       R"svg(patternTransform="rotate(45)"><rect width="3.5" height="7" class="cat-{}"/></pattern>)svg",
                       id, to_string(c), to_string(c));
  return out + "</defs>\n";
}

}  // namespace

int64_t axis_max(int64_t figures, int64_t capacity) {
  int64_t top = std::max<int64_t>(figures, 1);
  if (capacity > 0 && capacity <= 4 * top) top = std::max(top, capacity);
  return top;
}

int64_t arena_split(const MemoryPlan& plan, int64_t ymax) {
  if (plan.liveness.steps() < kMinStepsToSplit) return 0;
  int64_t lowest = ymax;
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    if (!b.external && !whole_program(plan, {b.first_step, b.last_step})) lowest = std::min(lowest, plan.offsets[i]);
  }
  return 2 * lowest >= ymax && lowest < ymax ? lowest : 0;
}

int64_t live_split(const MemoryPlan& plan, int64_t ymax) {
  const int64_t resident = live_stack(plan.ledger, plan.liveness.steps()).resident_total();
  return 2 * resident >= ymax && resident < ymax ? resident : 0;
}

// The arena: one rectangle per buffer at (steps, offset .. offset + physical bytes).
std::string arena_svg(const ReportSubject& s, std::string_view id, int64_t ymax, int64_t split, double width) {
  const MemoryPlan& plan = s.plan;
  Frame f{.width = width,
          .height = width > 900 ? 430.0 : 380.0,
          .steps = std::max(plan.liveness.steps(), 1),
          .ymax = ymax,
          .split = split};
  std::string out = svg_open(f, id, "arena", "time × address picture of the arena");
  out += hatch_patterns(id);
  out += plot_background(f);
  const bool band = !plan.ledger.timeline.empty() && f.steps >= 3;
  if (band) {
    const double x = f.x(plan.ledger.peak_step);
    out += fmt::format(R"(<rect class="peak-band" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)"
                       R"(<text class="peak-band-label" x="{:.1f}" y="{:.1f}" text-anchor="middle">peak</text>)"
                       "\n",
                       x, f.top, f.col(), f.plot_h(), x + f.col() / 2, f.top - 8);
  }
  out += y_axis(f, "address (offset in the arena)");
  out += x_axis(f, "step (execution order)", step_names(plan.ledger));

  // Owners first, then the in-place aliases drawn over their root's storage.
  std::vector<size_t> order;
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i)
    if (!plan.liveness.buffers[i].alias_of && !plan.liveness.buffers[i].external) order.push_back(i);
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i)
    if (plan.liveness.buffers[i].alias_of) order.push_back(i);

  std::vector<LabelCandidate> candidates;
  out += "<g class=\"buffers\">\n";
  for (size_t i : order) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    const int64_t offset = plan.offsets[i];
    double x = f.x(b.first_step);
    double w = (b.last_step - b.first_step + 1) * f.col();
    if (w > 3) x += 0.5, w -= 1;  // a hairline between neighbours in time
    const double y_low = f.y(offset);
    const double h = std::max(y_low - f.y(offset + b.physical_bytes), 1.5);
    const double y = y_low - h;
    const std::string category(to_string(b.category));
    out += fmt::format(
        R"(<rect class="buf cat-{}{}" x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}"{} data-name="{}" )"
        R"(data-category="{}" data-logical="{}" data-physical="{}" data-first="{}" data-last="{}" data-offset="{}" )"
        R"(data-alias="{}"><title>{}</title></rect>)"
        "\n",
        category, b.alias_of ? " alias" : "", x, y, w, h,
        b.alias_of ? fmt::format(R"svg( style="fill:url(#{}-hatch-{})")svg", id, category) : "", escape(b.name),
        category, b.logical_bytes, b.physical_bytes, b.first_step, b.last_step, offset,
        b.alias_of ? escape(plan.liveness.buffers[static_cast<size_t>(*b.alias_of)].name) : "", buffer_tooltip(s, i));
    const auto fit = static_cast<size_t>((w - 8) / kCharWidth);
    if (h >= 14 && fit >= 8) {
      // Exporters name activations "<node path>_output_0"; the path says enough.
      std::string_view name = b.name;
      if (name.size() > 9 && name.ends_with("_output_0")) name.remove_suffix(9);
      const std::string text = shorten(std::string(name), fit);
      candidates.push_back({.x = x + 4,
                            .top = y,
                            .h = h,
                            .w = static_cast<double>(glyphs(text)) * kCharWidth,
                            .area = w * h,
                            .text = text,
                            .css_class = b.alias_of ? "buf-label alias" : "buf-label"});
    }
  }
  // Names where they fit and do not cover one another, the largest buffers first; the
  // rest are in the tooltips.
  out += "</g>\n<g class=\"buf-labels\">\n" + place_labels(std::move(candidates)) + "</g>\n";
  const bool peak_left = band && f.x(plan.ledger.peak_step) < f.left + 160;
  out += plan_lines(f, plan, true, peak_left);
  return out + "</svg>\n";
}

// The live-at-once curve: one stacked bar per step, the peak labelled with its exact bytes.
std::string live_svg(const ReportSubject& s, std::string_view id, int64_t ymax, int64_t split, double width) {
  const MemoryPlan& plan = s.plan;
  const Ledger& ledger = plan.ledger;
  Frame f{.width = width,
          .height = width > 900 ? 330.0 : 300.0,
          .steps = std::max(plan.liveness.steps(), 1),
          .ymax = ymax + (ymax - split) / 6,
          .split = split};  // headroom for the peak label
  std::string out = svg_open(f, id, "live", "live-at-once bytes per step");
  out += plot_background(f);
  out += y_axis(f, "live bytes");
  out += x_axis(f, "step (execution order)", step_names(ledger));

  const LiveStack stack = live_stack(ledger, plan.liveness.steps());
  const double gap = f.col() >= 4 ? std::min(f.col() * 0.15, 24.0) : 0;
  out += "<g class=\"steps\">\n";
  for (size_t step = 0; step < ledger.timeline.size(); ++step) {
    const TimelineStep& t = ledger.timeline[step];
    std::string tip = fmt::format("step {} · {}\nlive {} ({}), {} buffers", t.step, t.node_name,
                                  human_bytes(t.live_bytes), exact_bytes(t.live_bytes), t.live_count);
    std::string segments;
    int64_t base = 0;
    // The whole-program storage at the bottom, then what comes and goes.
    for (const auto* part : {&stack.resident, &stack.transient[step]})
      for (size_t c = 0; c < kCategories.size(); ++c) {
        const int64_t bytes = (*part)[c];
        if (bytes == 0) continue;
        const double y_top = f.y(base + bytes);
        segments += fmt::format(R"(<rect class="seg cat-{}" x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}"/>)",
                                to_string(kCategories[c]), f.x(static_cast<double>(step)) + gap / 2, y_top,
                                f.col() - gap, f.y(base) - y_top);
        base += bytes;
      }
    for (size_t c = 0; c < kCategories.size(); ++c)
      if (const int64_t bytes = stack.resident[c] + stack.transient[step][c]; bytes > 0)
        tip += fmt::format("\n{} {}", to_string(kCategories[c]), human_bytes(bytes));
    out += fmt::format(R"(<g class="step{}" data-step="{}" data-live="{}"><title>{}</title>{}</g>)"
                       "\n",
                       static_cast<int>(step) == ledger.peak_step ? " peak" : "", t.step, t.live_bytes, escape(tip),
                       segments);
  }
  out += "</g>\n";
  out += plan_lines(f, plan, plan.arena_bytes > ledger.peak_live_bytes, false);

  if (!ledger.timeline.empty()) {
    const TimelineStep& peak = ledger.timeline[static_cast<size_t>(ledger.peak_step)];
    const double cx = f.x(ledger.peak_step + 0.5);
    const double cy = f.y(ledger.peak_live_bytes);
    // Keep the label inside the plot: anchor it away from the nearer edge.
    const bool start = cx < f.left + 190;
    const bool end = !start && cx > f.width - f.right - 190;
    const double tx = start ? std::max(cx - 6, f.left + 4) : end ? std::min(cx + 6, f.width - f.right - 4) : cx;
    const std::string label_id =
        std::string(id == "live" ? std::string_view() : id.substr(0, id.size() - 4)) + "peak-label";
    out += fmt::format(R"(<path class="peak-marker" d="M{:.1f},{:.1f} l-5,-8 h10 z"/>)"
                       R"(<text id="{}" class="peak-label" x="{:.1f}" y="{:.1f}" text-anchor="{}" )"
                       R"(data-bytes="{}" data-step="{}">peak-live {} ({}) at step {}<title>{}</title></text>)"
                       "\n",
                       cx, cy - 2, label_id, tx, cy - 14,
                       start ? "start"
                       : end ? "end"
                             : "middle",
                       ledger.peak_live_bytes, peak.step, human_bytes(ledger.peak_live_bytes),
                       exact_bytes(ledger.peak_live_bytes), peak.step, escape(peak.node_name));
  }
  return out + "</svg>\n";
}

}  // namespace memledger::report
