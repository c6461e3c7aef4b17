// The plan as a C header (issue 13, item 6): a C program includes the header, is compiled by
// the system's C compiler as strict C99 with warnings as errors, and prints what it reads;
// every buffer's name, offset, size and steps, and every step's node, must equal the JSON
// plan's. The program also checks the plan as a runtime would: every buffer inside the
// arena and aligned, no two buffers live at once sharing bytes unless one is the other's
// in-place alias.
#include "memledger/report/c_header.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "c_header_check.h"
#include "corpus.h"
#include "memledger/core/error.h"
#include "memledger/onnx/import.h"
#include "memledger/report/json_report.h"

namespace memledger {
namespace {

TEST(CHeader, CompilesAndMatchesTheJsonPlan) {
  for (const char* device : {"host", "teaching"}) {
    SCOPED_TRACE(device);
    const Graph g = import_onnx_file(MEMLEDGER_SOURCE_DIR "/tests/data/onnx/conv_bn_relu.onnx");
    const DeviceProfile profile = builtin_profile(device);
    const MemoryPlan plan = plan_memory(g, profile);
    const std::string header = plan_c_header(g, plan, profile, "conv_bn_relu.onnx");
    const std::string json = plan_report_json(g, plan, profile, "conv_bn_relu.onnx");
    testing::check_c_header(header, json, std::string("conv_bn_relu_") + device, nullptr);
  }
}

TEST(CHeader, OddNamesStayInsideTheirLiterals) {
  Graph g;
  const std::string odd = "x\"/*?? */\\\n\x7f end";
  const ValueId x = g.add_input({.name = "in", .shape = {1, 4}});
  const ValueId t = g.add_value({.name = odd, .shape = {1, 4}});
  g.add_node({.name = "*/ relu \"1\"", .op = "Relu", .inputs = {x}, .outputs = {t}});
  const ValueId y = g.add_value({.name = "y", .shape = {1, 4}});
  g.add_node({.name = "neg", .op = "Neg", .inputs = {t}, .outputs = {y}});
  g.mark_output(y);
  const DeviceProfile profile = builtin_profile("host");
  const MemoryPlan plan = plan_memory(g, profile);
  const std::string header = plan_c_header(g, plan, profile, "odd */ model.onnx");
  testing::check_c_header(header, plan_report_json(g, plan, profile, "odd"), "odd_names", nullptr);
}

TEST(CHeader, PrefixMustBeACIdentifier) {
  const Graph g = import_onnx_file(MEMLEDGER_SOURCE_DIR "/tests/data/onnx/conv_bn_relu.onnx");
  const DeviceProfile profile = builtin_profile("host");
  const MemoryPlan plan = plan_memory(g, profile);
  for (const char* bad : {"", "9ml", "my-plan", "a b"})
    EXPECT_THROW(plan_c_header(g, plan, profile, "m", {.prefix = bad}), Error) << bad;
  // Two plans in one program: different prefixes, no clash.
  const std::string a = plan_c_header(g, plan, profile, "m", {.prefix = "first"});
  EXPECT_NE(a.find("#define FIRST_ARENA_BYTES"), std::string::npos);
  EXPECT_NE(a.find("first_buffers["), std::string::npos);
  EXPECT_EQ(a.find("ml_"), std::string::npos);
}

TEST(CHeader, CorpusModelCompilesAndMatches) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  const Graph g = import_onnx_file((dir / "mobilenet_v2.onnx").string());
  const DeviceProfile profile = builtin_profile("teaching");
  const MemoryPlan plan = plan_memory(g, profile, {}, {.algorithm = allocate::Algorithm::kGreedy});
  testing::check_c_header(plan_c_header(g, plan, profile, "mobilenet_v2.onnx"),
                          plan_report_json(g, plan, profile, "mobilenet_v2.onnx"), "mobilenet_v2", nullptr);
}

}  // namespace
}  // namespace memledger
