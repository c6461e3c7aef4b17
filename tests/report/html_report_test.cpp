// The HTML report's content on the teaching example: one rectangle per buffer with exact
// bytes, the peak label, the capacity, the verdict, escaping, and no outside references.
// How it renders is checked in a real browser by scripts/browser_test.py.
#include "memledger/report/html_report.h"

#include <gtest/gtest.h>

#include <regex>

#include "memledger/onnx/import.h"
#include "memledger/plan/banked_plan.h"
#include "memledger/teaching/variants.h"

namespace memledger {
namespace {

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

struct Planned {
  teaching::Variant variant;
  MemoryPlan plan;
};

Planned planned(char letter, const DeviceProfile& profile) {
  for (auto& v : teaching::affine_variants())
    if (v.letter == letter) {
      MemoryPlan plan = plan_memory(v.graph, profile, v.options);
      return {std::move(v), std::move(plan)};
    }
  ADD_FAILURE() << "no variant " << letter;
  return {};
}

TEST(HtmlReport, OneRectanglePerBufferWithExactBytes) {
  const DeviceProfile teaching = builtin_profile("teaching");
  const auto [variant, plan] = planned('A', teaching);
  const std::string page = plan_report_html(variant.graph, plan, teaching, "variant A");
  EXPECT_EQ(count(page, "<rect class=\"buf "), static_cast<int>(plan.liveness.buffers.size()));
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const auto& b = plan.liveness.buffers[i];
    EXPECT_NE(page.find("data-name=\"" + b.name + "\" data-category=\"" + std::string(to_string(b.category)) +
                        "\" data-logical=\"" + std::to_string(b.logical_bytes) + "\" data-physical=\"" +
                        std::to_string(b.physical_bytes) + "\""),
              std::string::npos)
        << b.name;
  }
  EXPECT_NE(page.find("cat-workspace"), std::string::npos);  // the historical kernel's workspace
}

TEST(HtmlReport, PeakLabelCapacityAndVerdict) {
  const DeviceProfile teaching = builtin_profile("teaching");
  const auto [variant, plan] = planned('A', teaching);
  const std::string page = plan_report_html(variant.graph, plan, teaching, "variant A");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page, m, std::regex(R"re(id="peak-label"[^>]*data-bytes="(\d+)"[^>]*>([^<]*)<)re")));
  EXPECT_EQ(m[1], "44800");
  EXPECT_NE(m[2].str().find("(44800 B)"), std::string::npos) << m[2];
  EXPECT_NE(page.find("class=\"capacity-line\" data-bytes=\"32768\""), std::string::npos);
  EXPECT_NE(page.find("data-fits=\"false\""), std::string::npos);
  EXPECT_NE(page.find("Does not fit"), std::string::npos);
  EXPECT_NE(page.find("no placement can fit"), std::string::npos);  // peak-live itself is over

  const auto [b_variant, b_plan] = planned('B', teaching);
  const std::string fits = plan_report_html(b_variant.graph, b_plan, teaching, "variant B");
  EXPECT_NE(fits.find("data-fits=\"true\""), std::string::npos);
  EXPECT_NE(fits.find("data-bytes=\"17952\""), std::string::npos);
}

TEST(HtmlReport, InPlaceOutputsAreMarked) {
  const DeviceProfile teaching = builtin_profile("teaching");
  const auto [variant, plan] = planned('C', teaching);
  const std::string page = plan_report_html(variant.graph, plan, teaching, "variant C");
  EXPECT_EQ(count(page, "<rect class=\"buf cat-output alias\""), 1);
  EXPECT_NE(page.find("data-alias=\"x\""), std::string::npos);
  EXPECT_NE(page.find("written in place over x"), std::string::npos);
}

TEST(HtmlReport, UnlimitedAndFarCapacities) {
  const DeviceProfile host = builtin_profile("host");
  const auto [variant, plan] = planned('B', host);
  const std::string unlimited = plan_report_html(variant.graph, plan, host, "B on host");
  EXPECT_EQ(unlimited.find("class=\"capacity-line\""), std::string::npos);
  EXPECT_NE(unlimited.find("sets no capacity"), std::string::npos);

  DeviceProfile big = builtin_profile("teaching");
  big.capacity_bytes = 4 << 20;
  const auto [v2, plan2] = planned('B', big);
  const std::string far = plan_report_html(v2.graph, plan2, big, "B, 4 MiB");
  EXPECT_EQ(far.find("class=\"capacity-line\""), std::string::npos);  // it would flatten the picture
  EXPECT_NE(far.find("capacity 4.00 MiB is far above this chart"), std::string::npos);
}

TEST(HtmlReport, EscapesNamesAndStaysSelfContained) {
  const DeviceProfile teaching = builtin_profile("teaching");
  auto [variant, plan] = planned('B', teaching);
  plan.liveness.buffers[0].name = "<script>&\"'";
  const std::string page = plan_report_html(variant.graph, plan, teaching, "a <b> & c");
  EXPECT_EQ(page.find("<script>"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;&amp;&quot;&#39;"), std::string::npos);
  EXPECT_NE(page.find("a &lt;b&gt; &amp; c"), std::string::npos);
  const std::string outside_refs = std::regex_replace(page, std::regex(R"(url\(#)"), "");  // own ids are fine
  for (const char* outside : {" src=", " href=", "url(", "@import", "<link", "<script"})
    EXPECT_EQ(outside_refs.find(outside), std::string::npos) << outside;
}

TEST(HtmlReport, CompareSideBySideOnOneScale) {
  const DeviceProfile teaching = builtin_profile("teaching");
  const Graph expanded = teaching::expanded_mul_add_model();
  const MemoryPlan before = plan_memory(expanded, teaching);
  const auto [c, after] = planned('C', teaching);
  const std::string page =
      compare_report_html({expanded, before, teaching, "expanded"}, {c.graph, after, teaching, "C"});
  EXPECT_NE(page.find("id=\"before-arena\""), std::string::npos);
  EXPECT_NE(page.find("id=\"after-arena\""), std::string::npos);
  EXPECT_NE(page.find("id=\"before-peak-label\""), std::string::npos);
  EXPECT_NE(page.find("id=\"after-peak-label\""), std::string::npos);
  EXPECT_EQ(count(page, "<rect class=\"buf "),
            static_cast<int>(before.liveness.buffers.size() + after.liveness.buffers.size()));
  const int64_t change = after.ledger.peak_live_bytes - before.ledger.peak_live_bytes;
  ASSERT_LT(change, 0);
  EXPECT_NE(page.find("class=\"num delta down\" data-bytes=\"" + std::to_string(change) + "\""), std::string::npos);
  // Both pictures share one byte scale: the same viewBox and the same top tick.
  std::smatch m;
  const std::regex arena_box(R"re(id="(before|after)-arena" class="arena" viewBox="([^"]+)")re");
  std::vector<std::string> boxes;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), arena_box); it != std::sregex_iterator(); ++it)
    boxes.push_back((*it)[2]);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0], boxes[1]);
}

// A plan across banks: one lane (svg#arena-bank-K) per bank that holds a buffer, every
// buffer drawn once in its bank's lane at its offset from the bank's base, the table of banks.
TEST(HtmlReport, BankedPlanHasALanePerBank) {
  const Graph g = import_onnx_file(MEMLEDGER_SOURCE_DIR "/tests/data/onnx/randwire_ws_n10_s3.onnx");
  const DeviceProfile p = parse_device_profile(
      "name = \"two\"\nalignment_bytes = 16\nlayout = \"NHWC\"\nstorage = \"int8\"\nconstants = \"external\"\n"
      "[[banks]]\nname = \"tcm\"\ncapacity_bytes = 8192\nholds = [\"activations\", \"workspaces\"]\n"
      "[[banks]]\nname = \"sram\"\ncapacity_bytes = 1048576\naccess_cost = 4\n"
      "[[banks]]\nname = \"flash\"\ncapacity_bytes = 1048576\naccess_cost = 6\nread_only = true\n",
      "two.toml");
  const MemoryPlan plan = plan_memory_banked(g, p);
  ASSERT_TRUE(plan.banked && plan.fits);
  const std::string page = plan_report_html(g, plan, p, "randwire");
  int placed = 0;
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const int bank = plan.banked->bank_of[i];
    if (bank < 0) continue;
    ++placed;
    const LiveBuffer& b = plan.liveness.buffers[i];
    EXPECT_NE(page.find("data-name=\"" + b.name + "\""), std::string::npos) << b.name;
    EXPECT_NE(page.find("data-offset=\"" + std::to_string(plan.offsets[i]) + "\""), std::string::npos) << b.name;
  }
  EXPECT_EQ(count(page, "<rect class=\"buf "), placed);
  for (size_t k = 0; k < plan.banked->banks.size(); ++k) {
    const bool used = !plan.banked->solution.banks[k].problem.buffers.empty();
    EXPECT_EQ(page.find("id=\"arena-bank-" + std::to_string(k) + "\"") != std::string::npos, used) << k;
    EXPECT_NE(page.find("<tr data-bank=\"" + plan.banked->banks[k].name + "\""), std::string::npos) << k;
  }
  EXPECT_GT(count(page, "class=\"bank\""), 1);  // the small tcm spills into the sram
  EXPECT_NE(page.find("data-fits=\"true\""), std::string::npos);
  EXPECT_NE(page.find("across the 3 banks of "), std::string::npos);
}

}  // namespace
}  // namespace memledger
