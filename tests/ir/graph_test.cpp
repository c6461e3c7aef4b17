#include <gtest/gtest.h>

#include "memledger/core/error.h"
#include "memledger/ir/graph.h"
#include "memledger/ir/printer.h"
#include "memledger/ir/verifier.h"

namespace memledger {
namespace {

const AxisRoles kNCHW{AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW};

// x → Mul(scale) → Add(bias) → y, the teaching example as a model file has it.
Graph affine_graph(bool with_bypass) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 3, 2, 2}, .roles = kNCHW});
  Tensor scale(DType::kFloat32, {1, 3, 1, 1});
  for (int i = 0; i < 3; ++i) scale.data<float>()[i] = 0.5f * static_cast<float>(i + 1);
  const ValueId s = g.add_constant("scale", scale, kNCHW);
  const ValueId b = g.add_constant("bias", Tensor(DType::kFloat32, {1, 3, 1, 1}), kNCHW);
  const ValueId m = g.add_value({.name = "m", .shape = {1, 3, 2, 2}, .roles = kNCHW});
  const ValueId y = g.add_value({.name = "y", .shape = {1, 3, 2, 2}, .roles = kNCHW});
  g.add_node({.name = "mul", .op = "Mul", .inputs = {x, s}, .outputs = {m}});
  g.add_node({.name = "add", .op = "Add", .inputs = {m, b}, .outputs = {y}});
  if (with_bypass) {
    const ValueId z = g.add_value({.name = "z", .shape = {1, 3, 2, 2}, .roles = kNCHW});
    g.add_node({.name = "bypass", .op = "Add", .inputs = {y, x}, .outputs = {z}});
    g.mark_output(z);
  } else {
    g.mark_output(y);
  }
  return g;
}

TEST(Graph, PrintsAStableTextForm) {
  const Graph g = affine_graph(false);
  verify_graph(g);
  EXPECT_EQ(print_graph(g),
            "graph main opset 13\n"
            "input %x : float32[1,3,2,2] NCHW\n"
            "const %bias : float32[1,3,1,1] NCHW = [0, 0, 0]\n"
            "const %scale : float32[1,3,1,1] NCHW = [0.5, 1, 1.5]\n"
            "%m = Mul(%x, %scale) : float32[1,3,2,2] NCHW\n"
            "%y = Add(%m, %bias) : float32[1,3,2,2] NCHW\n"
            "output %y\n");
}

TEST(Graph, ConsumersAndUseReplacement) {
  Graph g = affine_graph(true);
  const ValueId x{0};
  EXPECT_EQ(g.consumers(x).size(), 2u);
  const NodeId add{1};
  const ValueId m = g.node(add).inputs[0];
  g.replace_all_uses(m, x);  // skip the Mul
  g.erase_node(NodeId{0});
  verify_graph(g);
  EXPECT_EQ(g.consumers(x).size(), 2u);
  EXPECT_EQ(g.reachable_values().size(), 4u);  // x, bias, y, z: the scale is no longer reachable
}

TEST(Verifier, RejectsUseBeforeDefinitionAndBadShapes) {
  Graph g = affine_graph(false);
  // Swap the two nodes: the Add now reads %m before the Mul defines it.
  Graph swapped;
  swapped.name = g.name;
  {
    Graph copy = g;
    const NodeId mul{0};
    copy.erase_node(mul);
    copy.add_node(copy.node(mul));
    try {
      verify_graph(copy);
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "node Add 'add': input 'm' is used before it is defined (a cycle or a dangling name)");
    }
  }
  g.value(ValueId{4}).shape = {1, 3, 2, 3};
  g.value(ValueId{4}).roles = kNCHW;
  EXPECT_THROW(verify_graph(g), Error);
}

TEST(Verifier, RejectsUndefinedOutputs) {
  Graph g;
  const ValueId v = g.add_value({.name = "ghost", .shape = {2}});
  g.mark_output(v);
  EXPECT_THROW(verify_graph(g), Error);
}

}  // namespace
}  // namespace memledger
