// Plotting in SVG for the HTML reports: a frame that maps steps along x and bytes along y
// (optionally with a compressed band at the bottom), the axes with 1-2-5 ticks in binary
// units, horizontal marker lines, and name labels placed where they do not collide. It
// knows nothing of plans: the charts (plan_charts) say what to draw.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memledger::report {

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
  double col() const;
  double x(double step) const { return left + step * col(); }
  double y(int64_t bytes) const;
  double bottom_y() const { return top + plot_h(); }
  bool has_split() const { return split > 0 && split < ymax; }
};

// "1234 B": the exact figure that tooltips show.
std::string exact_bytes(int64_t bytes);

// Tick labels: "0", "10 KiB", "2.5 MiB".
std::string tick_label(int64_t bytes);

// A 1-2-5 step in the binary unit of `range` (B, KiB, MiB, GiB), giving about `target` ticks.
int64_t nice_tick(int64_t range, int target);

// The opening <svg> tag, sized by the frame's viewBox.
std::string svg_open(const Frame& f, std::string_view id, std::string_view css_class, std::string_view label);

// The plot's background rectangle.
std::string plot_background(const Frame& f);

// Grid lines and labels of the byte axis, with the break of a split scale.
std::string y_axis(const Frame& f, std::string_view title);

// Step ticks, thinned so labels stay apart; with room, step s's name (`step_names[s]`,
// where there is one) under it.
std::string x_axis(const Frame& f, std::string_view title, const std::vector<std::string_view>& step_names);

// A horizontal marker line (capacity, arena) with its label at one end of the plot, above
// the line or, where something sits there already, below it.
std::string marker_line(const Frame& f, int64_t bytes, std::string_view css_class, std::string_view label,
                        bool label_right, bool label_below = false);

// A note in the top margin for a line far above what the frame shows ("capacity … is far
// above this chart ↑").
std::string note_above(const Frame& f, int64_t bytes, std::string_view css_class, std::string_view text);

// Average width of a label character at 11 px, in SVG user units.
inline constexpr double kCharWidth = 6.4;

// A text label that may go inside a rectangle (its left edge `x`, its `top` and height
// `h`) on a free line; `area` orders the candidates, the largest first.
struct LabelCandidate {
  double x = 0, top = 0, h = 0, w = 0, area = 0;
  std::string text;
  std::string css_class;  // of the <text> element
};

// The candidates that fit without covering one another, the largest first, as <text>
// elements; the others are left out (their names are in the tooltips).
std::string place_labels(std::vector<LabelCandidate> candidates);

}  // namespace memledger::report
