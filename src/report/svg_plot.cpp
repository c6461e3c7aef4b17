#include "svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "memledger/report/units.h"
#include "names.h"

namespace memledger::report {

double Frame::col() const { return plot_w() / std::max(steps, 1); }

double Frame::y(int64_t bytes) const {
  const auto fraction = [](int64_t part, int64_t whole) {
    return static_cast<double>(part) / static_cast<double>(std::max<int64_t>(whole, 1));
  };
  double share = fraction(bytes, ymax);
  if (has_split())
    share = bytes <= split ? split_share * fraction(bytes, split)
                           : split_share + (1 - split_share) * fraction(bytes - split, ymax - split);
  return top + plot_h() - plot_h() * share;
}

std::string exact_bytes(int64_t bytes) { return fmt::format("{} B", bytes); }

std::string tick_label(int64_t bytes) {
  if (bytes == 0) return "0";
  constexpr std::array<std::pair<int64_t, const char*>, 4> units = {
      {{int64_t{1} << 30, "GiB"}, {int64_t{1} << 20, "MiB"}, {int64_t{1} << 10, "KiB"}, {1, "B"}}};
  for (const auto& [unit, name] : units)
    if (bytes >= unit) return fmt::format("{:.4g} {}", static_cast<double>(bytes) / static_cast<double>(unit), name);
  return exact_bytes(bytes);
}

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

std::string svg_open(const Frame& f, std::string_view id, std::string_view css_class, std::string_view label) {
  return fmt::format(
      R"(<svg id="{}" class="{}" viewBox="0 0 {} {}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">)"
      "\n",
      id, css_class, f.width, f.height, escape(label));
}

std::string plot_background(const Frame& f) {
  return fmt::format(R"(<rect class="plot-bg" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)"
                     "\n",
                     f.left, f.top, f.plot_w(), f.plot_h());
}

namespace {

std::string y_tick(const Frame& f, int64_t bytes) {
  const double y = f.y(bytes);
  return fmt::format(R"(<line class="grid" x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)"
                     R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}<title>{}</title></text>)"
                     "\n",
                     f.left, f.width - f.right, y, y, f.left - 6, y + 4, tick_label(bytes), exact_bytes(bytes));
}

}  // namespace

std::string y_axis(const Frame& f, std::string_view title) {
  std::string out;
  const bool split = f.has_split();
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

std::string x_axis(const Frame& f, std::string_view title, const std::vector<std::string_view>& step_names) {
  int every = 1;
  while (every * f.col() < 34) every = every == 1 ? 2 : every == 2 ? 5 : every * 2;
  const auto name_chars = static_cast<size_t>(f.col() / 6.6);
  std::string out = fmt::format(R"(<line class="axis" x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)"
                                "\n",
                                f.left, f.width - f.right, f.bottom_y(), f.bottom_y());
  for (int s = 0; s < f.steps; s += every) {
    const double x = f.x(s + 0.5);
    std::string label = std::to_string(s);
    if (name_chars >= 8 && static_cast<size_t>(s) < step_names.size()) {
      const std::string_view node = step_names[static_cast<size_t>(s)];
      const size_t room = name_chars - label.size() - 3;
      label += " · ";
      label += node.size() > room ? std::string(node.substr(0, room - 1)) + "…" : std::string(node);
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

std::string marker_line(const Frame& f, int64_t bytes, std::string_view css_class, std::string_view label,
                        bool label_right, bool label_below) {
  const double y = f.y(bytes);
  return fmt::format(R"(<g class="{}" data-bytes="{}"><line x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)"
                     R"(<text x="{:.1f}" y="{:.1f}" text-anchor="{}">{}<title>{}</title></text></g>)"
                     "\n",
                     css_class, bytes, f.left, f.width - f.right, y, y,
                     label_right ? f.width - f.right - 4 : f.left + 4, label_below ? y + 14 : y - 5,
                     label_right ? "end" : "start", escape(label), exact_bytes(bytes));
}

std::string note_above(const Frame& f, int64_t bytes, std::string_view css_class, std::string_view text) {
  return fmt::format(R"(<text class="{}" x="{:.1f}" y="{:.1f}" text-anchor="end" data-bytes="{}">)"
                     "{}<title>{}</title></text>\n",
                     css_class, f.width - f.right - 4, f.top - 10, bytes, escape(text), exact_bytes(bytes));
}

std::string place_labels(std::vector<LabelCandidate> candidates) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const LabelCandidate& a, const LabelCandidate& b) { return a.area > b.area; });
  struct Placed {
    double x, w, y;
  };
  std::vector<Placed> placed;
  std::string out;
  for (const LabelCandidate& l : candidates) {
    const auto clear = [&](double y) {
      return std::none_of(placed.begin(), placed.end(), [&](const Placed& p) {
        return l.x < p.x + p.w + 4 && p.x < l.x + l.w + 4 && std::abs(y - p.y) < 13;
      });
    };
    double at = 0;  // 0 = nowhere free
    const double first = l.top + std::min(l.h / 2 + 4, 15.0);
    for (double y = first; y <= l.top + l.h - 3; y += 13)
      if (clear(y)) {
        at = y;
        break;
      }
    if (at == 0) continue;
    placed.push_back({l.x, l.w, at});
    out += fmt::format(R"(<text class="{}" x="{:.1f}" y="{:.1f}">{}</text>)"
                       "\n",
                       l.css_class, l.x, at, escape(l.text));
  }
  return out;
}

}  // namespace memledger::report
