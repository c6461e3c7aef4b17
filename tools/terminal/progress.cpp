#include "terminal/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace memledger {
namespace {

int terminal_width(std::FILE* stream) {
  winsize size{};
  if (ioctl(fileno(stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 10) return size.ws_col;
  return 80;
}

// Cuts a UTF-8 string to at most `columns` code points (one column each is close enough
// for labels and node names).
std::string clip(std::string_view text, int columns) {
  std::string out;
  int used = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool continuation = (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
    if (!continuation && used++ == columns) break;
    out += text[i];
  }
  return out;
}

}  // namespace

bool is_terminal(std::FILE* stream) {
  if (stream == nullptr || isatty(fileno(stream)) == 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

std::string format_progress_line(std::string_view label, int64_t done, int64_t total, double elapsed_seconds,
                                 std::string_view detail, int width) {
  std::string line(label);
  if (total > 0) {
    const int64_t clamped = std::clamp<int64_t>(done, 0, total);
    constexpr int kBar = 20;
    const auto filled = static_cast<size_t>(clamped * kBar / total);
    line += fmt::format("  [{}{}] {:>3}%  {}/{}", std::string(filled, '#'), std::string(kBar - filled, '.'),
                        clamped * 100 / total, done, total);
  } else {
    line += fmt::format("  {}", done);
  }
  line += fmt::format("  {:.1f} s", elapsed_seconds);
  if (!detail.empty()) line += fmt::format("  {}", detail);
  return clip(line, std::max(width - 1, 10));
}

Progress::Progress(std::string label, int64_t total, ProgressOptions options)
    : label_(std::move(label)),
      total_(total),
      stream_(options.stream),
      enabled_(options.enabled.value_or(is_terminal(options.stream))),
      min_interval_(options.min_interval_seconds),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - std::chrono::hours(1)) {}

Progress::~Progress() { finish(); }

void Progress::update(int64_t done, std::string_view detail) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool last = total_ > 0 && done >= total_;
  if (!last && std::chrono::duration<double>(now - last_draw_).count() < min_interval_) return;
  last_draw_ = now;
  draw(done, detail);
}

void Progress::draw(int64_t done, std::string_view detail) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // \r returns to the line's start, \x1b[K clears what a longer earlier line left.
  fmt::print(stream_, "\r{}\x1b[K",
             format_progress_line(label_, done, total_, elapsed, detail, terminal_width(stream_)));
  std::fflush(stream_);
  drawn_ = true;
}

void Progress::finish() {
  if (!enabled_ || !drawn_) return;
  fmt::print(stream_, "\r\x1b[K");
  std::fflush(stream_);
  drawn_ = false;
}

}  // namespace memledger
