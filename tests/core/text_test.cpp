// The one escaping rule for bytes that are not UTF-8 (core/text.h) and the JSON writer that
// applies it to every string of a report (core/json_text.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "memledger/core/text.h"

namespace memledger {
namespace {

TEST(EscapeNonUtf8, KeepsUtf8AndEscapesEveryOtherByte) {
  EXPECT_EQ(escape_non_utf8("conv1"), "conv1");
  EXPECT_EQ(escape_non_utf8("größe→"), "größe→");
  EXPECT_EQ(escape_non_utf8("m\xff.onnx"), "m\\xff.onnx");
  // A truncated sequence, an overlong form and a surrogate are not UTF-8: each byte escaped.
  EXPECT_EQ(escape_non_utf8("a\xc3"), "a\\xc3");
  EXPECT_EQ(escape_non_utf8("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(escape_non_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  // Control characters are the terminal's business, not this rule's.
  EXPECT_EQ(escape_non_utf8("a\x1b"), "a\x1b");
}

TEST(EscapeNonUtf8, AgreesWithTheTerminalRuleOnNonUtf8Bytes) {
  const std::string name = "x\xfe\xffy";
  EXPECT_EQ(escape_non_utf8(name), escape_for_terminal(name));
}

TEST(JsonText, WritesReportsWhoseStringsAreNotUtf8) {
  nlohmann::json j{{"model", "m\xff.onnx"},
                   {"buffers", nlohmann::json::array({{{"name", "ok"}}, {{"name", "v\xfe"}}})},
                   {"by_name", {{"k\xff", 1}}}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  const auto parsed = nlohmann::json::parse(json_text(j));
  EXPECT_EQ(parsed["model"], "m\\xff.onnx");
  EXPECT_EQ(parsed["buffers"][0]["name"], "ok");
  EXPECT_EQ(parsed["buffers"][1]["name"], "v\\xfe");
  EXPECT_EQ(parsed["by_name"]["k\\xff"], 1);
}

TEST(JsonText, LeavesValidReportsAsDumpWritesThem) {
  nlohmann::json j{{"model", "größe.onnx"}, {"n", 3}, {"list", {1, 2}}};
  EXPECT_EQ(json_text(j), j.dump(2));
  EXPECT_EQ(json_text(j, -1), j.dump());
}

}  // namespace
}  // namespace memledger
