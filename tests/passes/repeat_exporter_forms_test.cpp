// The seed thread as PyTorch writes it: torch.onnx.export's three forms of an input
// repeated g times into a grouped Conv (tests/data/onnx/repeat_*.onnx, written by
// scripts/make_torch_test_models.py) become one plain Conv under the default pipeline:
// no Tile, Concat or Expand left, group 1, weights over C/g input channels, and the
// rewritten model computes the same outputs on seeded inputs.
#include <gtest/gtest.h>

#include <string>

#include "memledger/exec/interpreter.h"
#include "memledger/onnx/import.h"
#include "memledger/passes/pass_table.h"
#include "memledger/verify/verify.h"

namespace memledger {
namespace {

class RepeatExporterForm : public ::testing::TestWithParam<std::string> {};

TEST_P(RepeatExporterForm, BecomesOnePlainConv) {
  const std::string file = std::string(MEMLEDGER_SOURCE_DIR) + "/tests/data/onnx/repeat_" + GetParam() + ".onnx";
  const Graph before = import_onnx_file(file);
  Graph after = before;
  run_pipeline(after, default_pipeline(), {.evaluate = evaluate_constant_node});
  int convs = 0;
  for (NodeId id : after.order()) {
    const Node& node = after.node(id);
    EXPECT_TRUE(node.op != "Tile" && node.op != "Concat" && node.op != "Expand") << GetParam() << ": " << node.label();
    if (node.op != "Conv") continue;
    ++convs;
    EXPECT_EQ(node.int_attr("group", 1), 1) << GetParam();
    const Shape& w = after.value(node.inputs.at(1)).shape;
    const Shape& x = after.value(node.inputs.at(0)).shape;
    EXPECT_EQ(w.at(1), 4) << GetParam() << ": weights over C/g = 4 input channels";  // C = 4, g = 3
    EXPECT_EQ(x.at(1), 4) << GetParam() << ": the Conv reads the unrepeated input";
  }
  EXPECT_EQ(convs, 1) << GetParam();
  const Verification v = verify_rewrite(before, after, {.seed = 3, .rtol = 1e-5});
  EXPECT_TRUE(v.ok) << GetParam() << "\n" << v.describe();
}

INSTANTIATE_TEST_SUITE_P(TorchExport, RepeatExporterForm,
                         ::testing::Values("tile_conv1d", "tile_conv1d_nobias", "cat_conv1d", "cat_conv1d_nobias",
                                           "cat_conv2d", "cat_conv2d_nobias", "expand_conv1d", "expand_conv1d_nobias",
                                           "expand_conv2d", "expand_conv2d_nobias"));

}  // namespace
}  // namespace memledger
