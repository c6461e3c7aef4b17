// The ambiguous-broadcast-axis lint (P2) on the seed matrix's shapes: fires when C == W and
// the parameter is a bare vector; quiet when all extents differ or the parameter is
// already shaped [1,C,1,1].
#include <gtest/gtest.h>

#include "memledger/lint/lint.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

std::vector<Diagnostic> lint_file(const std::string& name) {
  return run_lints(import_onnx_file(std::string(MEMLEDGER_SOURCE_DIR) + "/tests/data/onnx/" + name));
}

TEST(AmbiguousBroadcastAxis, FiresWhenChannelEqualsWidth) {
  const auto found = lint_file("affine_c_eq_w.onnx");
  ASSERT_EQ(found.size(), 2u);  // the scale and the bias
  const Diagnostic& d = found[0];
  EXPECT_EQ(d.code, "ambiguous-broadcast-axis");
  EXPECT_EQ(d.node, "Mul 'scale_mul'");
  EXPECT_NE(d.message.find("parameter 'scale' [20] broadcasts against 'c' [1,20,16,20] NCHW"), std::string::npos)
      << d.message;
  EXPECT_NE(d.message.find("along its last axis, axis 3 (W)"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("also matches axis 1 (C)"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("reshape it to [1,20,1,1] for the channel axis"), std::string::npos) << d.message;
  EXPECT_EQ(found[1].node, "Add 'bias_add'");
}

TEST(AmbiguousBroadcastAxis, QuietWhenUnambiguous) {
  EXPECT_TRUE(lint_file("affine_distinct.onnx").empty());       // [1,12,1,1] against [1,12,20,28]
  EXPECT_TRUE(lint_file("affine_vector_w.onnx").empty());       // [28] against [1,12,20,28]: only W has 28
  EXPECT_TRUE(lint_file("affine_c_eq_w_stated.onnx").empty());  // [1,20,1,1]: the author said which axis
  EXPECT_TRUE(lint_file("affine_c_eq_h.onnx").empty());         // [16,1,1]: trailing unit axes place it
  EXPECT_TRUE(lint_file("conv_bn_relu.onnx").empty());
}

TEST(AmbiguousBroadcastAxis, NamesAxesByNumberWhenNoRoleIsStated) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {4, 7, 4}});
  const ValueId v = g.add_constant("v", Tensor(DType::kFloat32, {4}));
  const ValueId y = g.add_value({.name = "y", .shape = {4, 7, 4}});
  g.add_node({.name = "", .op = "Add", .inputs = {x, v}, .outputs = {y}});
  g.mark_output(y);
  const auto found = run_lints(g);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("node Add: parameter 'v' [4] broadcasts against 'x' [4,7,4] along its last axis, "
                                  "axis 2, because"),
            std::string::npos)
      << found[0].message;
  EXPECT_NE(found[0].message.find("reshape it to [4,1,1] for axis 0"), std::string::npos) << found[0].message;
}

}  // namespace
}  // namespace memledger
