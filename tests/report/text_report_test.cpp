// The terminal report: aligned columns, human units, long names cut in the middle, no
// trailing spaces.
#include "memledger/report/text_report.h"

#include <gtest/gtest.h>

#include <cctype>
#include <sstream>
#include <vector>

#include "memledger/teaching/variants.h"

namespace memledger {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Display columns of a UTF-8 line (one per code point: the report uses no wide glyphs).
size_t columns(const std::string& line) {
  size_t n = 0;
  for (char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

MemoryPlan plan_of(char letter) {
  for (const auto& v : teaching::affine_variants())
    if (v.letter == letter) return plan_memory(v.graph, builtin_profile("teaching"), v.options);
  ADD_FAILURE() << "no variant " << letter;
  return {};
}

TEST(TextReport, CategoryTableIsAlignedWithThePeakColumn) {
  const MemoryPlan plan = plan_of('A');
  const auto rows = lines(category_table(plan));
  ASSERT_GE(rows.size(), 3u);
  for (const auto& row : rows) EXPECT_EQ(columns(row), columns(rows[0])) << row;
  EXPECT_NE(rows[0].find("at the peak"), std::string::npos);
  EXPECT_NE(rows.back().find("43.75 KiB"), std::string::npos);  // total at the peak = peak-live 44800 B
}

TEST(TextReport, BufferTableCutsLongNamesAndLeavesNoTrailingSpaces) {
  MemoryPlan plan = plan_of('C');
  plan.liveness.buffers[0].name = "/layer1/layer1.0/conv1/Conv_output_0_and_a_much_longer_tail";
  const std::string table = buffer_table(plan);
  for (const auto& row : lines(table)) {
    EXPECT_NE(row.back(), ' ') << row;
    EXPECT_LE(columns(row), 150u) << row;  // names and aliases cut to 40 columns each
  }
  EXPECT_NE(table.find("/layer1/layer1.…"), std::string::npos) << table;
  EXPECT_NE(table.find("much_longer_tail"), std::string::npos) << table;
  // The "steps" and "offset" columns line up on every row.
  const auto rows = lines(table);
  const size_t at = columns(rows[0].substr(0, rows[0].find("offset") + 6));
  for (size_t i = 1; i < rows.size(); ++i) {
    std::string prefix;
    size_t n = 0;
    for (char c : rows[i]) {
      if (n == at) break;
      prefix += c;
      n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(prefix.back()))) << rows[i];
  }
}

TEST(TextReport, PeakContributorsAndVerdict) {
  const MemoryPlan plan = plan_of('A');
  const std::string peak = peak_contributors(plan, 2);
  EXPECT_NE(peak.find("43.75 KiB live in 5 buffers"), std::string::npos) << peak;
  EXPECT_NE(peak.find("3 more"), std::string::npos) << peak;
  EXPECT_NE(plan_verdict(plan).find("peak-live 43.75 KiB (44800 B)"), std::string::npos);
  EXPECT_NE(plan_verdict(plan).find("DOES NOT FIT"), std::string::npos);
}

}  // namespace
}  // namespace memledger
