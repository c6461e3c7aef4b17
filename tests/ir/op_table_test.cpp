#include "memledger/ir/op_table.h"

#include <gtest/gtest.h>

#include <set>

#include "memledger/core/error.h"
#include "memledger/device/tensor_layout.h"
#include "memledger/ir/affine.h"

namespace memledger {
namespace {

Value tensor(const std::string& name, Shape shape) { return Value{.name = name, .shape = std::move(shape)}; }

// x [1,4,6,6] → op → y of `out` shape.
struct OneNode {
  Graph g;
  NodeId node;
  OneNode(const std::string& op, const std::string& domain = "", Shape out = {1, 4, 6, 6}) {
    const ValueId x = g.add_input(tensor("x", {1, 4, 6, 6}));
    const ValueId y = g.add_value(tensor("y", std::move(out)));
    node = g.add_node(Node{.name = "n", .op = op, .domain = domain, .inputs = {x}, .outputs = {y}});
    g.mark_output(y);
  }
};

TEST(OpTable, EachOperatorHasOneRecordPerOpset) {
  std::set<std::tuple<std::string_view, std::string_view, int>> seen;
  for (const OpRecord& r : op_table()) EXPECT_TRUE(seen.insert({r.domain, r.name, r.since_version}).second) << r.name;
  EXPECT_GT(op_table().size(), 100u);
}

TEST(OpTable, FindsByDomainAndTreatsAiOnnxAsDefault) {
  ASSERT_NE(find_op("", "Conv"), nullptr);
  EXPECT_EQ(find_op("ai.onnx", "Conv"), find_op("", "Conv"));
  EXPECT_EQ(find_op("", "Affine"), nullptr);  // ours lives in the memledger domain
  ASSERT_NE(find_op(kMemledgerDomain, kAffineOp), nullptr);
  EXPECT_EQ(find_op("com.example", "FancyNorm"), nullptr);
}

TEST(OpTable, BroadcastingIsOneFactForLintAndPasses) {
  // The lists that used to disagree (lint had these, compact-constants did not).
  for (const char* op : {"PRelu", "Mod", "BitShift", "LessOrEqual", "GreaterOrEqual", "Add", "Where"})
    EXPECT_TRUE(find_op("", op)->broadcasts) << op;
  for (const char* op : {"Relu", "Conv", "MatMul", "Concat"}) EXPECT_FALSE(find_op("", op)->broadcasts) << op;
}

TEST(OpTable, InPlaceAndAliasAreDifferentRules) {
  EXPECT_EQ(find_op("", "Relu")->in_place, InPlaceRule::kElementwise);
  EXPECT_EQ(find_op("", "Reshape")->in_place, InPlaceRule::kAlias);
  EXPECT_EQ(find_op("", "Conv")->in_place, InPlaceRule::kNone);
  const DeviceProfile host = builtin_profile("host");
  OneNode relu("Relu");
  EXPECT_EQ(op_contract(relu.g, relu.node, host).overwritable_inputs, std::vector<int>{0});
  // A Relu whose output has another shape (a malformed graph) may not take its input.
  OneNode odd("Relu", "", {1, 4, 6, 5});
  EXPECT_TRUE(op_contract(odd.g, odd.node, host).overwritable_inputs.empty());
  // Reshape's output is its input's bytes only where both are stored in logical order:
  // on the host (the whole tensor is the aligned run), not under NHWC with padded pixels.
  OneNode flat("Reshape", "", {1, 144});
  EXPECT_EQ(op_contract(flat.g, flat.node, host).overwritable_inputs, std::vector<int>{0});
  EXPECT_TRUE(op_contract(flat.g, flat.node, builtin_profile("teaching")).overwritable_inputs.empty());
}

TEST(OpTable, ConvPostOpsAndIdempotenceAreRecordFacts) {
  // exec/fast fuses these into a Conv; an idempotent one may compute once more after it.
  for (const char* op : {"Relu", "Clip"}) {
    const OpRecord* r = find_op("", op);
    ASSERT_NE(r, nullptr) << op;
    EXPECT_TRUE(r->conv_post_op && r->idempotent) << op;
  }
  for (const char* op : {"Sigmoid", "HardSigmoid"}) {
    const OpRecord* r = find_op("", op);
    ASSERT_NE(r, nullptr) << op;
    EXPECT_TRUE(r->conv_post_op) << op;
    EXPECT_FALSE(r->idempotent) << op;  // sigmoid(sigmoid(x)) != sigmoid(x)
  }
  int post_ops = 0;
  for (const OpRecord& r : op_table()) {
    post_ops += r.conv_post_op ? 1 : 0;
    EXPECT_TRUE(!r.idempotent || r.conv_post_op) << r.name;  // the flag serves fusion only
  }
  EXPECT_EQ(post_ops, 4);
  for (const char* op : {"Mul", "Tanh", "Conv"}) EXPECT_FALSE(find_op("", op)->conv_post_op) << op;
}

TEST(OpTable, UnknownOperatorNeedsTheProfilesDeclaration) {
  OneNode custom("FancyNorm", "com.example");
  const DeviceProfile host = builtin_profile("host");
  EXPECT_FALSE(op_is_known(custom.g.node(custom.node), host));
  try {
    op_contract(custom.g, custom.node, host);
    FAIL() << "an unknown operator has no contract";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("com.example.FancyNorm is not in the op table"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("[ops.com.example.FancyNorm]"), std::string::npos);
  }
  const DeviceProfile npu = parse_device_profile(
      "name = \"npu\"\n[ops.\"com.example.FancyNorm\"]\nin_place_input = 0\nworkspace = \"2*output\"\n", "npu.toml");
  EXPECT_TRUE(op_is_known(custom.g.node(custom.node), npu));
  const KernelContract c = op_contract(custom.g, custom.node, npu);
  EXPECT_EQ(c.overwritable_inputs, std::vector<int>{0});
  const Layout y = tensor_layout(npu, {1, 4, 6, 6}, DType::kFloat32, {});
  EXPECT_EQ(c.workspace_bytes, 2 * y.bytes());
}

TEST(OpTable, ProfileDeclarationsAreCheckedAndRoundTrip) {
  auto error = [](const std::string& text) {
    try {
      parse_device_profile(text, "npu.toml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("name = \"n\"\n[ops.X]\nworkspace = \"lots\"\n").find("ops.X.workspace"), std::string::npos);
  EXPECT_NE(error("name = \"n\"\n[ops.X]\nworkspace = \"0*output\"\n").find("ops.X.workspace"), std::string::npos);
  EXPECT_NE(error("name = \"n\"\n[ops.X]\nin_place_input = -1\n").find("ops.X.in_place_input"), std::string::npos);
  EXPECT_NE(error("name = \"n\"\n[ops.X]\ncolour = 1\n").find("unknown key 'ops.X.colour'"), std::string::npos);
  EXPECT_NE(error("name = \"n\"\nops = 3\n").find("ops"), std::string::npos);
  const DeviceProfile npu =
      parse_device_profile("name = \"npu\"\n[ops.MyOp]\nworkspace = 4096\n[ops.Other]\nin_place_input = 1\n", "n");
  const DeviceProfile again = parse_device_profile(to_toml(npu), "again");
  ASSERT_EQ(again.ops.size(), 2u);
  EXPECT_EQ(again.ops.at("MyOp").workspace_bytes, 4096);
  EXPECT_EQ(again.ops.at("MyOp").in_place_input, -1);
  EXPECT_EQ(again.ops.at("Other").in_place_input, 1);
}

}  // namespace
}  // namespace memledger
