#include "memledger/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include "memledger/report/units.h"
#include "memledger/version.h"

namespace memledger {
namespace {

// The order categories are listed in, bottom to top in the stacked curve.
constexpr std::array kCategories = {BufferCategory::kInput, BufferCategory::kConstant, BufferCategory::kActivation,
                                    BufferCategory::kWorkspace, BufferCategory::kOutput};

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string exact(int64_t bytes) { return fmt::format("{} B", bytes); }

// A human figure whose exact value shows on hover.
std::string bytes_cell(int64_t bytes) {
  return fmt::format(R"(<td class="num" data-bytes="{}" title="{}">{}</td>)", bytes, exact(bytes), human_bytes(bytes));
}

std::string percent(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "–";
}

// Tick labels: "0", "10 KiB", "2.5 MiB".
std::string tick_label(int64_t bytes) {
  if (bytes == 0) return "0";
  constexpr std::array<std::pair<int64_t, const char*>, 4> units = {
      {{int64_t{1} << 30, "GiB"}, {int64_t{1} << 20, "MiB"}, {int64_t{1} << 10, "KiB"}, {1, "B"}}};
  for (const auto& [unit, name] : units)
    if (bytes >= unit) return fmt::format("{:.4g} {}", static_cast<double>(bytes) / static_cast<double>(unit), name);
  return exact(bytes);
}

// A 1-2-5 step in the unit of the range, giving about `target` ticks.
int64_t nice_tick(int64_t range, int target) {
  const int64_t unit = range >= (int64_t{1} << 30)   ? int64_t{1} << 30
                       : range >= (int64_t{1} << 20) ? int64_t{1} << 20
                       : range >= 1024               ? 1024
                                                     : 1;
  const double raw = std::max(static_cast<double>(range) / static_cast<double>(unit) / target, 1e-9);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (raw <= m * magnitude) {
      step = m * magnitude;
      break;
    }
  return std::max<int64_t>(1, static_cast<int64_t>(std::llround(step * static_cast<double>(unit))));
}

// A plot area in SVG user units: steps along x (one column each), bytes along y with 0
// at the bottom. When `split` > 0 the bytes below it (buffers live for the whole program,
// such as resident weights) take only `split_share` of the height, so what changes from
// step to step stays readable; the axis marks the break.
struct Frame {
  double width = 1240, height = 420;
  double left = 80, right = 18, top = 30, bottom = 44;
  int steps = 1;
  int64_t ymax = 1;
  int64_t split = 0;
  double split_share = 0.2;

  double plot_w() const { return width - left - right; }
  double plot_h() const { return height - top - bottom; }
  double col() const { return plot_w() / std::max(steps, 1); }
  double x(double step) const { return left + step * col(); }
  double y(int64_t bytes) const {
    const auto fraction = [](int64_t part, int64_t whole) {
      return static_cast<double>(part) / static_cast<double>(std::max<int64_t>(whole, 1));
    };
    double share = fraction(bytes, ymax);
    if (split > 0 && split < ymax)
      share = bytes <= split ? split_share * fraction(bytes, split)
                             : split_share + (1 - split_share) * fraction(bytes - split, ymax - split);
    return top + plot_h() - plot_h() * share;
  }
  double bottom_y() const { return top + plot_h(); }
};

std::string svg_open(const Frame& f, const std::string& id, const std::string& css_class, const std::string& label) {
  return fmt::format(
      R"(<svg id="{}" class="{}" viewBox="0 0 {} {}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">)"
      "\n",
      id, css_class, f.width, f.height, escape(label));
}

std::string y_tick(const Frame& f, int64_t bytes) {
  const double y = f.y(bytes);
  return fmt::format(R"(<line class="grid" x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)"
                     R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}<title>{}</title></text>)"
                     "\n",
                     f.left, f.width - f.right, y, y, f.left - 6, y + 4, tick_label(bytes), exact(bytes));
}

// Grid lines and labels of the byte axis, with the break of a split scale.
std::string y_axis(const Frame& f, const std::string& title) {
  std::string out;
  const bool split = f.split > 0 && f.split < f.ymax;
  const int64_t from = split ? f.split : 0;
  const int64_t tick = nice_tick(f.ymax - from, split ? 4 : 5);
  out += y_tick(f, 0);
  if (split) out += y_tick(f, f.split);
  for (int64_t v = (from / tick + 1) * tick; v <= f.ymax; v += tick)
    if (f.y(from) - f.y(v) >= 14) out += y_tick(f, v);  // not on top of the split's label
  if (split) {
    const double y = f.y(f.split);
    out += fmt::format(R"svg(<g class="axis-break"><line x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)svg"
                       R"svg(<path d="M{:.1f},{:.1f} l8,-5 M{:.1f},{:.1f} l8,-5"/>)svg"
                       R"svg(<title>below {}: only storage live for the whole program, drawn compressed</title></g>)svg"
                       "\n",
                       f.left, f.width - f.right, y, y, f.left - 4, y + 4, f.left - 4, y + 8, human_bytes(f.split));
  }
  out += fmt::format(
      R"svg(<text class="axis-title" transform="translate(14 {:.1f}) rotate(-90)" text-anchor="middle">{}</text>)svg"
      "\n",
      f.top + f.plot_h() / 2, escape(title));
  return out;
}

// Step ticks, thinned so labels stay apart; with room, the node's name under its step.
std::string x_axis(const Frame& f, const std::string& title, const Ledger& ledger) {
  int every = 1;
  while (every * f.col() < 34) every = every == 1 ? 2 : every == 2 ? 5 : every * 2;
  const auto name_chars = static_cast<size_t>(f.col() / 6.6);
  std::string out = fmt::format(R"(<line class="axis" x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)"
                                "\n",
                                f.left, f.width - f.right, f.bottom_y(), f.bottom_y());
  for (int s = 0; s < f.steps; s += every) {
    const double x = f.x(s + 0.5);
    std::string label = std::to_string(s);
    if (name_chars >= 8 && static_cast<size_t>(s) < ledger.timeline.size()) {
      const std::string& node = ledger.timeline[static_cast<size_t>(s)].node_name;
      const size_t room = name_chars - label.size() - 3;
      label += " · " + (node.size() > room ? node.substr(0, room - 1) + "…" : node);
    }
    out += fmt::format(R"(<line class="axis" x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)"
                       R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)"
                       "\n",
                       x, x, f.bottom_y(), f.bottom_y() + 4, x, f.bottom_y() + 17, escape(label));
  }
  out += fmt::format(R"(<text class="axis-title" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)"
                     "\n",
                     f.left + f.plot_w() / 2, f.height - 6, escape(title));
  return out;
}

// A horizontal marker line (capacity, arena) with its label at one end of the plot, above
// the line or, where something sits there already, below it.
std::string marker_line(const Frame& f, int64_t bytes, const std::string& css_class, const std::string& label,
                        bool label_right, bool label_below = false) {
  const double y = f.y(bytes);
  return fmt::format(R"(<g class="{}" data-bytes="{}"><line x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)"
                     R"(<text x="{:.1f}" y="{:.1f}" text-anchor="{}">{}<title>{}</title></text></g>)"
                     "\n",
                     css_class, bytes, f.left, f.width - f.right, y, y,
                     label_right ? f.width - f.right - 4 : f.left + 4, label_below ? y + 14 : y - 5,
                     label_right ? "end" : "start", escape(label), exact(bytes));
}

// A note in the top margin when the capacity lies far above what the chart shows.
std::string capacity_above(const Frame& f, int64_t capacity) {
  return fmt::format(R"(<text class="capacity-note" x="{:.1f}" y="{:.1f}" text-anchor="end" data-bytes="{}">)"
                     "capacity {} is far above this chart ↑<title>{}</title></text>\n",
                     f.width - f.right - 4, f.top - 10, capacity, human_bytes(capacity), exact(capacity));
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
    out += capacity_above(f, plan.capacity_bytes);
  return out;
}

// The byte range an axis shows: the figures that matter, and the capacity when it is near
// enough (4×) not to flatten everything else.
int64_t axis_max(int64_t figures, int64_t capacity) {
  int64_t top = std::max<int64_t>(figures, 1);
  if (capacity > 0 && capacity <= 4 * top) top = std::max(top, capacity);
  return top;
}

// Below this many steps everything spans "the whole program": no split.
constexpr int kMinStepsToSplit = 4;

bool whole_program(const MemoryPlan& plan, std::pair<int, int> interval) {
  return interval.first == 0 && interval.second == plan.liveness.steps() - 1;
}

// The arena addresses below the lowest buffer that does not live for the whole program,
// when they are at least half the picture (resident weights under a few activations).
int64_t arena_split(const MemoryPlan& plan, int64_t ymax) {
  if (plan.liveness.steps() < kMinStepsToSplit) return 0;
  int64_t lowest = ymax;
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    if (!b.external && !whole_program(plan, {b.first_step, b.last_step})) lowest = std::min(lowest, plan.offsets[i]);
  }
  return 2 * lowest >= ymax && lowest < ymax ? lowest : 0;
}

// Bytes of storage live at each step by the owner's category (aliases counted once, as in
// the ledger's timeline), the storage that lives for the whole program apart.
struct LiveStack {
  std::array<int64_t, kCategories.size()> resident{};
  std::vector<std::array<int64_t, kCategories.size()>> transient;  // per step
  int64_t resident_total() const {
    int64_t total = 0;
    for (int64_t b : resident) total += b;
    return total;
  }
};

size_t category_index(BufferCategory c) {
  return static_cast<size_t>(std::find(kCategories.begin(), kCategories.end(), c) - kCategories.begin());
}

LiveStack live_stack(const MemoryPlan& plan) {
  LiveStack stack;
  stack.transient.resize(plan.ledger.timeline.size());
  const auto intervals = plan.liveness.storage_intervals();
  const bool split = plan.liveness.steps() >= kMinStepsToSplit;
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    if (b.alias_of || b.external) continue;
    const size_t c = category_index(b.category);
    if (split && whole_program(plan, intervals[i])) {
      stack.resident[c] += b.physical_bytes;
      continue;
    }
    for (int step = intervals[i].first; step <= intervals[i].second && step < static_cast<int>(stack.transient.size());
         ++step)
      stack.transient[static_cast<size_t>(step)][c] += b.physical_bytes;
  }
  return stack;
}

int64_t live_at_peak(const LiveStack& stack, size_t category, int peak_step) {
  const auto step = static_cast<size_t>(peak_step);
  return stack.resident[category] + (step < stack.transient.size() ? stack.transient[step][category] : 0);
}

int64_t live_split(const MemoryPlan& plan, int64_t ymax) {
  const int64_t resident = live_stack(plan).resident_total();
  return 2 * resident >= ymax && resident < ymax ? resident : 0;
}

std::string buffer_tooltip(const ReportSubject& s, size_t i) {
  const LiveBuffer& b = s.plan.liveness.buffers[i];
  std::string text =
      fmt::format("{} ({})\nlogical {} · physical {}\nsteps {}–{} · {}", b.name, to_string(b.category),
                  exact(b.logical_bytes), exact(b.physical_bytes), b.first_step, b.last_step,
                  b.external ? std::string("outside the arena") : fmt::format("offset {}", s.plan.offsets[i]));
  if (b.value.valid()) {
    const Value& v = s.graph.value(b.value);
    text += fmt::format("\n{} {}", dtype_name(v.dtype), shape_to_string(v.shape));
  }
  if (b.alias_of)
    text += fmt::format("\nwritten in place over {}", s.plan.liveness.buffers[static_cast<size_t>(*b.alias_of)].name);
  return escape(text);
}

// Average width of a label character at 11 px, in SVG user units.
constexpr double kCharWidth = 6.4;

size_t glyphs(std::string_view text) {
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// A name cut to `chars` characters in the middle, where ONNX paths repeat themselves
// ("/layer1/layer1.0/conv1/Conv_output_0" → "/layer1/l…Conv_output_0"). Byte-based, so
// only for ASCII names; others are cut at the end on a character boundary.
std::string shorten(const std::string& name, size_t chars) {
  if (glyphs(name) <= chars) return name;
  if (glyphs(name) == name.size()) {
    const size_t head = (chars - 1) * 2 / 5;
    const size_t tail = chars - 1 - head;
    return name.substr(0, head) + "…" + name.substr(name.size() - tail);
  }
  std::string out;
  size_t used = 0;
  for (char c : name) {
    const bool starts = (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (starts && ++used == chars) break;
    out += c;
  }
  return out + "…";
}

// Stripes of each category's colour, for in-place outputs drawn over their root.
std::string hatch_patterns(const std::string& id) {
  std::string out = "<defs>";
  for (BufferCategory c : kCategories)
    out += fmt::format(R"(<pattern id="{}-hatch-{}" width="7" height="7" patternUnits="userSpaceOnUse" )"
                       R"svg(patternTransform="rotate(45)"><rect width="3.5" height="7" class="cat-{}"/></pattern>)svg",
                       id, to_string(c), to_string(c));
  return out + "</defs>\n";
}

// The arena: one rectangle per buffer at (steps, offset .. offset + physical bytes).
std::string arena_svg(const ReportSubject& s, const std::string& id, int64_t ymax, int64_t split, double width) {
  const MemoryPlan& plan = s.plan;
  Frame f{.width = width,
          .height = width > 900 ? 430.0 : 380.0,
          .steps = std::max(plan.liveness.steps(), 1),
          .ymax = ymax,
          .split = split};
  std::string out = svg_open(f, id, "arena", "time × address picture of the arena");
  out += hatch_patterns(id);
  out += fmt::format(R"(<rect class="plot-bg" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)"
                     "\n",
                     f.left, f.top, f.plot_w(), f.plot_h());
  const bool band = !plan.ledger.timeline.empty() && f.steps >= 3;
  if (band) {
    const double x = f.x(plan.ledger.peak_step);
    out += fmt::format(R"(<rect class="peak-band" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)"
                       R"(<text class="peak-band-label" x="{:.1f}" y="{:.1f}" text-anchor="middle">peak</text>)"
                       "\n",
                       x, f.top, f.col(), f.plot_h(), x + f.col() / 2, f.top - 8);
  }
  out += y_axis(f, "address (offset in the arena)");
  out += x_axis(f, "step (execution order)", plan.ledger);

  // Owners first, then the in-place aliases drawn over their root's storage.
  std::vector<size_t> order;
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i)
    if (!plan.liveness.buffers[i].alias_of && !plan.liveness.buffers[i].external) order.push_back(i);
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i)
    if (plan.liveness.buffers[i].alias_of) order.push_back(i);

  struct Label {
    double x, top, h, w, area;  // the rectangle's top and height: the label goes on a free line inside
    std::string text;
    bool alias = false;
    double y = 0;  // where it went; 0 = nowhere free
  };
  std::vector<Label> candidates;
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
      candidates.push_back(
          {x + 4, y, h, static_cast<double>(glyphs(text)) * kCharWidth, w * h, text, b.alias_of.has_value()});
    }
  }
  // Names where they fit and do not cover one another, the largest buffers first; the
  // rest are in the tooltips.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Label& a, const Label& b) { return a.area > b.area; });
  std::vector<const Label*> placed;
  std::string labels;
  for (Label& l : candidates) {
    const auto clear = [&](double y) {
      return std::none_of(placed.begin(), placed.end(), [&](const Label* p) {
        return l.x < p->x + p->w + 4 && p->x < l.x + l.w + 4 && std::abs(y - p->y) < 13;
      });
    };
    const double first = l.top + std::min(l.h / 2 + 4, 15.0);
    for (double y = first; y <= l.top + l.h - 3; y += 13)
      if (clear(y)) {
        l.y = y;
        break;
      }
    if (l.y == 0) continue;
    placed.push_back(&l);
    labels += fmt::format(R"(<text class="buf-label{}" x="{:.1f}" y="{:.1f}">{}</text>)"
                          "\n",
                          l.alias ? " alias" : "", l.x, l.y, escape(l.text));
  }
  out += "</g>\n<g class=\"buf-labels\">\n" + labels + "</g>\n";
  const bool peak_left = band && f.x(plan.ledger.peak_step) < f.left + 160;
  out += plan_lines(f, plan, true, peak_left);
  return out + "</svg>\n";
}

// The live-at-once curve: one stacked bar per step, the peak labelled with its exact bytes.
std::string live_svg(const ReportSubject& s, const std::string& id, int64_t ymax, int64_t split, double width) {
  const MemoryPlan& plan = s.plan;
  const Ledger& ledger = plan.ledger;
  Frame f{.width = width,
          .height = width > 900 ? 330.0 : 300.0,
          .steps = std::max(plan.liveness.steps(), 1),
          .ymax = ymax + (ymax - split) / 6,
          .split = split};  // headroom for the peak label
  std::string out = svg_open(f, id, "live", "live-at-once bytes per step");
  out += fmt::format(R"(<rect class="plot-bg" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)"
                     "\n",
                     f.left, f.top, f.plot_w(), f.plot_h());
  out += y_axis(f, "live bytes");
  out += x_axis(f, "step (execution order)", ledger);

  const LiveStack stack = live_stack(plan);
  const double gap = f.col() >= 4 ? std::min(f.col() * 0.15, 24.0) : 0;
  out += "<g class=\"steps\">\n";
  for (size_t step = 0; step < ledger.timeline.size(); ++step) {
    const TimelineStep& t = ledger.timeline[step];
    std::string tip = fmt::format("step {} · {}\nlive {} ({}), {} buffers", t.step, t.node_name,
                                  human_bytes(t.live_bytes), exact(t.live_bytes), t.live_buffers.size());
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
    const std::string label_id = (id == "live" ? std::string() : id.substr(0, id.size() - 4)) + "peak-label";
    out += fmt::format(R"(<path class="peak-marker" d="M{:.1f},{:.1f} l-5,-8 h10 z"/>)"
                       R"(<text id="{}" class="peak-label" x="{:.1f}" y="{:.1f}" text-anchor="{}" )"
                       R"(data-bytes="{}" data-step="{}">peak-live {} ({}) at step {}<title>{}</title></text>)"
                       "\n",
                       cx, cy - 2, label_id, tx, cy - 14,
                       start ? "start"
                       : end ? "end"
                             : "middle",
                       ledger.peak_live_bytes, peak.step, human_bytes(ledger.peak_live_bytes),
                       exact(ledger.peak_live_bytes), peak.step, escape(peak.node_name));
  }
  return out + "</svg>\n";
}

std::string legend(const MemoryPlan& plan) {
  std::string out = "<div class=\"legend\">";
  for (BufferCategory c : kCategories)
    if (plan.ledger.by_category.contains(c))
      out += fmt::format(R"(<span><i class="sw cat-{}"></i>{}</span>)", to_string(c), to_string(c));
  bool aliases = false;
  for (const auto& b : plan.liveness.buffers) aliases = aliases || b.alias_of.has_value();
  if (aliases) out += R"(<span><i class="sw alias"></i>written in place over another buffer</span>)";
  if (plan.capacity_bytes > 0) out += R"(<span><i class="ln capacity"></i>capacity</span>)";
  out += R"(<span><i class="ln arena"></i>arena</span>)";
  return out + "</div>\n";
}

struct Verdict {
  bool fits = true;
  std::string headline, detail;
};

Verdict verdict(const ReportSubject& s) {
  const MemoryPlan& plan = s.plan;
  if (plan.capacity_bytes <= 0)
    return {true, "Fits",
            fmt::format("'{}' sets no capacity; the arena needs {}", s.profile.name, human_bytes(plan.arena_bytes))};
  if (plan.fits)
    return {
        true, "Fits",
        fmt::format("arena {} of the {} capacity of '{}' ({}), {} to spare", human_bytes(plan.arena_bytes),
                    human_bytes(plan.capacity_bytes), s.profile.name, percent(plan.arena_bytes, plan.capacity_bytes),
                    human_bytes(plan.capacity_bytes - plan.arena_bytes))};
  std::string detail = fmt::format("arena {} exceeds the {} capacity of '{}' by {}", human_bytes(plan.arena_bytes),
                                   human_bytes(plan.capacity_bytes), s.profile.name,
                                   human_bytes(plan.arena_bytes - plan.capacity_bytes));
  if (plan.ledger.peak_live_bytes > plan.capacity_bytes)
    detail += fmt::format("; peak-live alone is {} over, so no placement can fit: what is live at once must shrink",
                          human_bytes(plan.ledger.peak_live_bytes - plan.capacity_bytes));
  else
    detail += "; peak-live is within capacity, so a better placement could fit";
  return {false, "Does not fit", detail};
}

std::string verdict_html(const ReportSubject& s, const std::string& id) {
  const Verdict v = verdict(s);
  return fmt::format(R"(<div id="{}" class="verdict {}" data-fits="{}"><b>{} {}</b> <span>{}</span></div>)"
                     "\n",
                     id, v.fits ? "fits" : "nofit", v.fits ? "true" : "false", v.fits ? "✔" : "✘", v.headline,
                     escape(v.detail));
}

std::string figure(const std::string& label, int64_t bytes, const std::string& note) {
  return fmt::format(
      R"(<div class="figure"><div class="label">{}</div><div class="value" data-bytes="{}" title="{}">{}</div>)"
      R"(<div class="note">{}</div></div>)",
      label, bytes, exact(bytes), human_bytes(bytes), escape(note));
}

std::string figures_html(const ReportSubject& s) {
  const MemoryPlan& plan = s.plan;
  const Ledger& l = plan.ledger;
  const std::string peak_node = l.timeline.empty() ? "" : l.timeline[static_cast<size_t>(l.peak_step)].node_name;
  std::string out = "<div class=\"figures\">";
  out += figure("peak-live", l.peak_live_bytes,
                fmt::format("at step {} ({}); {} the graph inputs", l.peak_step, peak_node,
                            l.inputs_in_arena ? "counts" : "leaves out"));
  out += figure(l.inputs_in_arena ? "peak-live without inputs" : "peak-live with inputs",
                l.inputs_in_arena ? l.peak_live_without_inputs_bytes : l.peak_live_with_inputs_bytes,
                l.inputs_in_arena ? "the graph inputs left out" : "the graph inputs (outside the arena) counted");
  out += figure("arena", plan.arena_bytes,
                fmt::format("{}, {}{}", plan.algorithm, plan.optimal ? "optimal" : "not proven optimal",
                            plan.arena_bytes > l.peak_live_bytes
                                ? ", " + human_bytes(plan.arena_bytes - l.peak_live_bytes) + " fragmentation"
                                : ""));
  if (plan.capacity_bytes > 0)
    out += figure("capacity", plan.capacity_bytes, "device '" + s.profile.name + "'");
  else
    out += fmt::format(R"(<div class="figure"><div class="label">capacity</div><div class="value">unlimited</div>)"
                       R"(<div class="note">device '{}'</div></div>)",
                       escape(s.profile.name));
  out += figure("logical", l.logical_bytes, "all values, no padding");
  out += figure("physical", l.physical_bytes, "all buffers under the layout rules");
  out += fmt::format(R"(<div class="figure"><div class="label">buffers · steps</div><div class="value">{} · {}</div>)"
                     R"(<div class="note">{} written in place</div></div>)",
                     plan.liveness.buffers.size(), plan.liveness.steps(),
                     std::count_if(plan.liveness.buffers.begin(), plan.liveness.buffers.end(),
                                   [](const LiveBuffer& b) { return b.alias_of.has_value(); }));
  return out + "</div>\n";
}

std::string category_table(const MemoryPlan& plan) {
  const LiveStack stack = live_stack(plan);
  // The "outside the arena" column only where some buffer is (external constants, inputs).
  const bool external = plan.ledger.external_bytes > 0;
  const auto external_cell = [&](int64_t bytes) { return external ? bytes_cell(bytes) : std::string(); };
  std::string out = fmt::format(
      "<table class=\"ledger\"><thead><tr><th>category</th><th class=\"num\">buffers</th><th class=\"num\">logical"
      "</th><th class=\"num\">physical</th>{}<th class=\"num\">live at the peak</th></tr></thead><tbody>\n",
      external ? "<th class=\"num\">outside the arena</th>" : "");
  for (size_t c = 0; c < kCategories.size(); ++c) {
    const auto it = plan.ledger.by_category.find(kCategories[c]);
    if (it == plan.ledger.by_category.end()) continue;
    const int64_t peak = live_at_peak(stack, c, plan.ledger.peak_step);
    out +=
        fmt::format(R"(<tr data-category="{}"><td><i class="sw cat-{}"></i>{}</td><td class="num">{}</td>{}{}{}{}</tr>)"
                    "\n",
                    to_string(kCategories[c]), to_string(kCategories[c]), to_string(kCategories[c]), it->second.count,
                    bytes_cell(it->second.logical_bytes), bytes_cell(it->second.physical_bytes),
                    external_cell(it->second.external_bytes), bytes_cell(peak));
  }
  out += fmt::format(R"(<tr class="total"><td>total</td><td class="num">{}</td>{}{}{}{}</tr>)"
                     "\n",
                     plan.liveness.buffers.size(), bytes_cell(plan.ledger.logical_bytes),
                     bytes_cell(plan.ledger.physical_bytes), external_cell(plan.ledger.external_bytes),
                     bytes_cell(plan.ledger.peak_live_bytes));
  return out + "</tbody></table>\n";
}

std::string contributors_table(const MemoryPlan& plan, int count) {
  if (plan.ledger.timeline.empty()) return "";
  const TimelineStep& step = plan.ledger.timeline[static_cast<size_t>(plan.ledger.peak_step)];
  std::string out = fmt::format(
      "<p class=\"note\">At step {} (<code>{}</code>), {} is live in {} buffers; the largest:</p>\n"
      "<table class=\"contributors\"><thead><tr><th>buffer</th><th>category</th><th class=\"num\">physical</th>"
      "<th class=\"num\">share</th><th class=\"bar-col\"></th><th class=\"num\">steps</th></tr></thead><tbody>\n",
      step.step, escape(step.node_name), human_bytes(step.live_bytes), step.live_buffers.size());
  int shown = 0;
  int64_t rest = 0;
  int rest_count = 0;
  for (int index : step.live_buffers) {
    const LiveBuffer& b = plan.liveness.buffers[static_cast<size_t>(index)];
    if (b.alias_of) continue;
    if (shown == count) {
      rest += b.physical_bytes;
      ++rest_count;
      continue;
    }
    ++shown;
    const double share =
        step.live_bytes > 0 ? static_cast<double>(b.physical_bytes) / static_cast<double>(step.live_bytes) : 0.0;
    out += fmt::format(
        R"(<tr><td class="name" title="{}">{}</td><td><i class="sw cat-{}"></i>{}</td>{}<td class="num">{:.1f}%</td>)"
        R"(<td class="bar-col"><span class="bar cat-{}" style="width:{:.1f}%"></span></td><td class="num">{}–{}</td></tr>)"
        "\n",
        escape(b.name), escape(b.name), to_string(b.category), to_string(b.category), bytes_cell(b.physical_bytes),
        100 * share, to_string(b.category), 100 * share, b.first_step, b.last_step);
  }
  if (rest_count > 0)
    out +=
        fmt::format(R"(<tr class="rest"><td colspan="2">{} more</td>{}<td class="num">{}</td><td></td><td></td></tr>)"
                    "\n",
                    rest_count, bytes_cell(rest), percent(rest, step.live_bytes));
  return out + "</tbody></table>\n";
}

std::string buffers_table(const ReportSubject& s) {
  const MemoryPlan& plan = s.plan;
  const size_t n = plan.liveness.buffers.size();
  std::string out = fmt::format(
      "<details{}><summary>All {} buffers</summary>\n<table class=\"buffers\"><thead><tr><th>buffer</th>"
      "<th>category</th><th>type</th><th class=\"num\">logical</th><th class=\"num\">physical</th>"
      "<th class=\"num\">steps</th><th class=\"num\">offset</th><th>in place of</th></tr></thead><tbody>\n",
      n <= 24 ? " open" : "", n);
  for (size_t i = 0; i < n; ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    std::string type;
    if (b.value.valid()) {
      const Value& v = s.graph.value(b.value);
      type = fmt::format("{} {}", dtype_name(v.dtype), shape_to_string(v.shape));
    }
    out += fmt::format(
        R"(<tr><td class="name" title="{}">{}</td><td><i class="sw cat-{}"></i>{}</td><td class="type">{}</td>{}{})"
        R"(<td class="num">{}–{}</td><td class="num">{}</td><td class="name">{}</td></tr>)"
        "\n",
        escape(b.name), escape(b.name), to_string(b.category), to_string(b.category), escape(type),
        bytes_cell(b.logical_bytes), bytes_cell(b.physical_bytes), b.first_step, b.last_step,
        b.external ? std::string("external") : std::to_string(plan.offsets[i]),
        b.alias_of ? escape(plan.liveness.buffers[static_cast<size_t>(*b.alias_of)].name) : "");
  }
  return out + "</tbody></table>\n</details>\n";
}

std::string device_line(const DeviceProfile& p) {
  return fmt::format(
      "device <b>{}</b> · capacity {} · alignment {} B · {} activations · storage {} · constants {} · inputs {}",
      escape(p.name), p.capacity_bytes > 0 ? human_bytes(p.capacity_bytes) : "unlimited", p.alignment_bytes,
      to_string(p.layout), p.storage ? dtype_name(*p.storage) : "as in the model", to_string(p.constants),
      to_string(p.inputs));
}

constexpr std::string_view kStyle = R"(
:root{--c-input:#4e79a7;--c-output:#59a14f;--c-activation:#f28e2b;--c-constant:#b07aa1;--c-workspace:#e15759;
--ink:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:var(--bg)}
main{max-width:1320px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:22px;margin:0 0 4px}h1 .model{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-weight:600}
h2{font-size:17px;margin:0 0 6px}h3{font-size:15px;margin:14px 0 6px}
.sub{color:var(--muted);margin:0 0 12px}
section,.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin:14px 0}
.note{color:var(--muted);margin:2px 0 8px;font-size:13px}
.verdict{border-radius:8px;padding:10px 14px;margin:10px 0;font-size:15px}
.verdict.fits{background:#dafbe1;border:1px solid #4ac26b}.verdict.nofit{background:#ffebe9;border:1px solid #ff8182}
.verdict b{margin-right:6px}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:10px;margin:10px 0}
.figure{background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.figure .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.figure .value{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums}
.figure .note{margin:0;font-size:12px;overflow-wrap:anywhere}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:13px;color:var(--muted);margin:4px 0 6px}
.legend span{display:inline-flex;align-items:center;gap:5px}
i.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
i.sw.alias{background:repeating-linear-gradient(45deg,#59a14f 0 3px,#fff 3px 6px);border:1px dashed #333}
i.ln{display:inline-block;width:22px;border-top:2px dashed}
i.ln.capacity{border-color:#cf222e}i.ln.arena{border-color:#59636e;border-top-style:dotted}
.sw.cat-input,.bar.cat-input{background:var(--c-input)}.sw.cat-output,.bar.cat-output{background:var(--c-output)}
.sw.cat-activation,.bar.cat-activation{background:var(--c-activation)}
.sw.cat-constant,.bar.cat-constant{background:var(--c-constant)}
.sw.cat-workspace,.bar.cat-workspace{background:var(--c-workspace)}
svg{display:block;width:100%;height:auto;font-family:inherit}
svg .cat-input{fill:var(--c-input)}svg .cat-output{fill:var(--c-output)}svg .cat-activation{fill:var(--c-activation)}
svg .cat-constant{fill:var(--c-constant)}svg .cat-workspace{fill:var(--c-workspace)}
.plot-bg{fill:#fbfcfd;stroke:var(--line)}
.grid{stroke:#e6eaef}.axis{stroke:#8c959f}
.tick{font-size:11px;fill:var(--muted)}.axis-title{font-size:12px;fill:var(--muted)}
.peak-band{fill:#fff6d1}.peak-band-label{font-size:11px;fill:#9a6700;font-weight:600}
.buf{stroke:#fff;stroke-width:.6}.buf:hover,.step:hover rect{stroke:#000;stroke-width:1.5}
.buf.alias{stroke:#24292f;stroke-dasharray:3 2;stroke-width:1}
.axis-break line{stroke:#8c959f;stroke-dasharray:1 3}.axis-break path{stroke:#57606a;stroke-width:1.5;fill:none}
.axis-break text{font-size:11px;fill:var(--muted)}
.buf-label{font-size:11px;fill:#1f2328;pointer-events:none}
.buf-label.alias{font-style:italic;paint-order:stroke;stroke:#fff;stroke-width:3px}
.arena-line line{stroke:#59636e;stroke-width:1.2;stroke-dasharray:2 3}.arena-line text{font-size:12px;fill:#59636e}
.arena-line text,.capacity-line text,.peak-label{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
.capacity-line line{stroke:#cf222e;stroke-width:1.6;stroke-dasharray:7 4}
.capacity-line text,.capacity-note{font-size:12px;fill:#cf222e;font-weight:600}
.peak-marker{fill:#1f2328}.peak-label{font-size:13px;font-weight:700;fill:#1f2328}
.step.peak rect{stroke:#1f2328;stroke-width:1}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:4px 8px;border-bottom:1px solid #eaeef2;text-align:left;white-space:nowrap}
th{color:var(--muted);font-weight:600;border-bottom:1px solid var(--line)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.name{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;max-width:360px;overflow:hidden;text-overflow:ellipsis}
td.type{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;color:var(--muted)}
tr.total td{font-weight:600;border-top:1px solid var(--line)}tr.rest td{color:var(--muted)}
.bar-col{width:28%}.bar{display:block;height:10px;border-radius:2px;min-width:1px}
table.compare{width:auto;min-width:560px}table.compare td:first-child{padding-right:32px}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:14px}.cols>section{margin:0}
@media (max-width:900px){.cols{grid-template-columns:1fr}}
details summary{cursor:pointer;font-weight:600}
.delta.down{color:#1a7f37}.delta.up{color:#cf222e}
footer{color:var(--muted);font-size:12px;margin-top:18px}
)";

std::string page_open(const std::string& title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"memledger "
      "{}\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
      kVersion, escape(title), kStyle);
}

std::string page_close() {
  return fmt::format(
      "<footer>Written by memledger {}. Sizes in KiB/MiB (1024-based); hover any rectangle, bar or figure for exact "
      "bytes. Self-contained: no network, no scripts.</footer>\n</main>\n</body>\n</html>\n",
      kVersion);
}

constexpr std::string_view kArenaNote =
    "Each rectangle is one buffer: it spans the steps during which it is live and the addresses it occupies. "
    "Hatched rectangles with a dashed edge are outputs written in place over another buffer's memory.";
constexpr std::string_view kLiveNote =
    "Bytes live at each step, stacked by category (in-place outputs counted once). The tallest bar is peak-live, "
    "the least memory any placement needs.";

// Says what the break on a chart's byte axis means.
std::string split_note(int64_t split, std::string_view below, std::string_view what) {
  if (split <= 0) return "";
  return fmt::format(
      "<p class=\"note split-note\" data-bytes=\"{}\">The {} below {} (under the zigzag on the axis) hold {}, such "
      "as resident weights; that part is drawn compressed so what changes from step to step stays readable.</p>\n",
      split, below, human_bytes(split), what);
}

std::string delta_cell(int64_t before, int64_t after) {
  const int64_t d = after - before;
  if (d == 0) return R"(<td class="num delta">–</td>)";
  return fmt::format(R"(<td class="num delta {}" data-bytes="{}" title="{} B">{}{} ({}{})</td>)", d < 0 ? "down" : "up",
                     d, d, d < 0 ? "−" : "+", human_bytes(std::llabs(d)), d < 0 ? "−" : "+",
                     before > 0 ? percent(std::llabs(d), before) : "new");
}

}  // namespace

std::string plan_report_html(const Graph& graph, const MemoryPlan& plan, const DeviceProfile& profile,
                             const std::string& model_name) {
  const ReportSubject s{graph, plan, profile, model_name};
  std::string out = page_open("memledger · " + model_name);
  out += fmt::format("<header>\n<h1>memledger · <span class=\"model\">{}</span></h1>\n<p class=\"sub\">{}</p>\n",
                     escape(model_name), device_line(profile));
  out += verdict_html(s, "verdict");
  out += figures_html(s) + "</header>\n";

  out += fmt::format(
      "<section id=\"arena-section\">\n<h2>Arena: where each buffer lives, and when</h2>\n"
      "<p class=\"note\">{}</p>\n",
      kArenaNote);
  out += legend(plan);
  const int64_t arena_max = axis_max(plan.arena_bytes, plan.capacity_bytes);
  const int64_t arena_cut = arena_split(plan, arena_max);
  out += arena_svg(s, "arena", arena_max, arena_cut, 1240);
  out += split_note(arena_cut, "addresses", "only buffers that live for the whole program");
  out += "</section>\n";

  out += fmt::format("<section id=\"live-section\">\n<h2>Live at once</h2>\n<p class=\"note\">{}</p>\n", kLiveNote);
  const int64_t live_max = axis_max(std::max(plan.ledger.peak_live_bytes, plan.arena_bytes), plan.capacity_bytes);
  const int64_t live_cut = live_split(plan, live_max);
  out += live_svg(s, "live", live_max, live_cut, 1240);
  out += split_note(live_cut, "bytes", "storage that lives for the whole program");
  out += "</section>\n";

  out +=
      "<div class=\"cols\">\n<section id=\"ledger-section\">\n<h2>Ledger by category</h2>\n"
      "<p class=\"note\">Logical: the values alone. Physical: with alignment and padding (in-place outputs own "
      "none).</p>\n";
  out += category_table(plan);
  out += "</section>\n<section id=\"peak-section\">\n<h2>Biggest at the peak</h2>\n";
  out += contributors_table(plan, 10);
  out += "</section>\n</div>\n";

  out += "<section id=\"buffers-section\">\n" + buffers_table(s) + "</section>\n";
  return out + page_close();
}

std::string compare_report_html(const ReportSubject& before, const ReportSubject& after) {
  std::string out = page_open("memledger · " + before.model + " → " + after.model);
  out += fmt::format(
      "<header>\n<h1>memledger · <span class=\"model\">{}</span> → <span class=\"model\">{}</span></h1>\n"
      "<p class=\"sub\">{}</p>\n",
      escape(before.model), escape(after.model), device_line(after.profile));

  // The figures side by side, with the change.
  const Ledger& lb = before.plan.ledger;
  const Ledger& la = after.plan.ledger;
  out +=
      "<section id=\"change-section\">\n<h2>Before → after</h2>\n<table class=\"compare\"><thead><tr><th></th><th "
      "class=\"num\">before</th><th class=\"num\">after</th>"
      "<th class=\"num\">change</th></tr></thead><tbody>\n";
  const auto row = [&](const std::string& label, int64_t b, int64_t a) {
    out += fmt::format("<tr><td>{}</td>{}{}{}</tr>\n", label, bytes_cell(b), bytes_cell(a), delta_cell(b, a));
  };
  row("<b>peak-live</b>", lb.peak_live_bytes, la.peak_live_bytes);
  row("<b>arena</b>", before.plan.arena_bytes, after.plan.arena_bytes);
  row("logical", lb.logical_bytes, la.logical_bytes);
  row("physical", lb.physical_bytes, la.physical_bytes);
  for (BufferCategory c : kCategories) {
    const auto b = lb.by_category.find(c);
    const auto a = la.by_category.find(c);
    if (b == lb.by_category.end() && a == la.by_category.end()) continue;
    row(fmt::format("<i class=\"sw cat-{}\"></i>{} (physical)", to_string(c), to_string(c)),
        b == lb.by_category.end() ? 0 : b->second.physical_bytes,
        a == la.by_category.end() ? 0 : a->second.physical_bytes);
  }
  out += fmt::format(
      "<tr><td>buffers · steps</td><td class=\"num\">{} · {}</td><td class=\"num\">{} · {}</td><td></td></tr>\n",
      before.plan.liveness.buffers.size(), before.plan.liveness.steps(), after.plan.liveness.buffers.size(),
      after.plan.liveness.steps());
  out += "</tbody></table>\n</section>\n</header>\n";

  // One byte scale for both sides, so equal heights mean equal bytes.
  const int64_t capacity = std::max(before.plan.capacity_bytes, after.plan.capacity_bytes);
  const int64_t arena_max = axis_max(std::max(before.plan.arena_bytes, after.plan.arena_bytes), capacity);
  const int64_t live_max = axis_max(
      std::max({lb.peak_live_bytes, la.peak_live_bytes, before.plan.arena_bytes, after.plan.arena_bytes}), capacity);
  // Compressed only where both sides compress, and then by the smaller amount.
  const int64_t arena_cut = std::min(arena_split(before.plan, arena_max), arena_split(after.plan, arena_max));
  const int64_t live_cut = std::min(live_split(before.plan, live_max), live_split(after.plan, live_max));
  out += "<div class=\"cols\">\n";
  for (const auto& [side, s] : {std::pair<std::string, const ReportSubject*>{"before", &before}, {"after", &after}}) {
    out += fmt::format("<section id=\"{}-section\">\n<h2>{}: <span class=\"model\">{}</span></h2>\n", side,
                       side == "before" ? "Before" : "After", escape(s->model));
    out += verdict_html(*s, side + "-verdict");
    out += "<h3>Arena</h3>\n" + legend(s->plan);
    out += arena_svg(*s, side + "-arena", arena_max, arena_cut, 640);
    out += split_note(arena_cut, "addresses", "only buffers that live for the whole program");
    out += "<h3>Live at once</h3>\n";
    out += live_svg(*s, side + "-live", live_max, live_cut, 640);
    out += split_note(live_cut, "bytes", "storage that lives for the whole program");
    out += "<h3>Ledger by category</h3>\n" + category_table(s->plan);
    out += "<h3>Biggest at the peak</h3>\n" + contributors_table(s->plan, 6);
    out += "</section>\n";
  }
  out += "</div>\n";
  out += fmt::format("<p class=\"note\">{} {}</p>\n", kArenaNote, kLiveNote);
  return out + page_close();
}

}  // namespace memledger
