// A one-line progress indicator for long work (the exact placement search, corpus runs),
// drawn on stderr only when stderr is a terminal: logs, pipes and tests see nothing.
// Redraws are throttled, so calling update() in a hot loop costs a clock read.
// It belongs to the programs, not the library (which reports progress through callbacks
// and never prints): the target memledger_terminal, linked by the CLI, bench and tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace memledger {

// One line: "label  [########........]  42%  21/50  0.8 s  detail" with a known total, or
// "label  21  0.8 s  detail" without one. `width` bounds the whole line (the terminal's).
std::string format_progress_line(std::string_view label, int64_t done, int64_t total, double elapsed_seconds,
                                 std::string_view detail, int width = 80);

struct ProgressOptions {
  std::FILE* stream = stderr;
  // nullopt: on when `stream` is a terminal and TERM is not "dumb".
  std::optional<bool> enabled;
  double min_interval_seconds = 0.1;  // between redraws
};

// Not thread-safe: one thread reports. The line is cleared on finish() or destruction,
// so the work's own output starts on a clean line.
class Progress {
 public:
  explicit Progress(std::string label, int64_t total = 0, ProgressOptions options = {});
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(int64_t done, std::string_view detail = {});
  void finish();
  bool enabled() const { return enabled_; }

 private:
  void draw(int64_t done, std::string_view detail);

  std::string label_;
  int64_t total_;
  std::FILE* stream_;
  bool enabled_;
  bool drawn_ = false;
  double min_interval_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

// True when `stream` is an interactive terminal (and TERM is not "dumb").
bool is_terminal(std::FILE* stream);

}  // namespace memledger
