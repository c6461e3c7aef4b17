// The progress line's text, and silence when the stream is not a terminal.
#include "terminal/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace memledger {
namespace {

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string out;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) out += static_cast<char>(c);
  return out;
}

TEST(Progress, LineWithKnownTotal) {
  EXPECT_EQ(format_progress_line("exact search", 5, 20, 1.3, "best 4096 B"),
            "exact search  [#####...............]  25%  5/20  1.3 s  best 4096 B");
  EXPECT_EQ(format_progress_line("corpus", 3, 3, 0, ""), "corpus  [####################] 100%  3/3  0.0 s");
}

TEST(Progress, LineWithoutTotalAndClipped) {
  EXPECT_EQ(format_progress_line("nodes", 42, 0, 2, "conv1"), "nodes  42  2.0 s  conv1");
  const std::string clipped = format_progress_line("label", 1, 2, 0, std::string(200, 'x'), 40);
  EXPECT_EQ(clipped.size(), 39u);  // never wraps onto a second line
}

TEST(Progress, SilentWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p("work", 10, {.stream = f});  // a file is not a terminal
    EXPECT_FALSE(p.enabled());
    for (int i = 0; i <= 10; ++i) p.update(i, "step");
  }
  EXPECT_EQ(read_all(f), "");
  std::fclose(f);
}

TEST(Progress, DrawsAndClearsWhenEnabled) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p("work", 4, {.stream = f, .enabled = true, .min_interval_seconds = 3600});
    p.update(1);  // the first update draws
    p.update(2);  // throttled
    p.update(4);  // the last one always draws
  }
  const std::string out = read_all(f);
  EXPECT_NE(out.find("\rwork  [#####...............]  25%  1/4"), std::string::npos) << out;
  EXPECT_EQ(out.find("2/4"), std::string::npos) << out;
  EXPECT_NE(out.find("4/4"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - 4), "\r\x1b[K");  // cleared at the end
  std::fclose(f);
}

}  // namespace
}  // namespace memledger
