#include <gtest/gtest.h>

#include <algorithm>
#include <random>

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

// What the index must agree with: a scan of the live nodes in execution order.
std::vector<NodeId> scanned_consumers(const Graph& g, ValueId id) {
  std::vector<NodeId> found;
  for (NodeId n : g.order()) {
    const auto& ins = g.node(n).inputs;
    if (std::find(ins.begin(), ins.end(), id) != ins.end()) found.push_back(n);
  }
  return found;
}

void expect_index_exact(const Graph& g, const std::string& after) {
  for (size_t v = 0; v < g.value_count(); ++v) {
    const ValueId id{static_cast<int32_t>(v)};
    EXPECT_EQ(g.consumers(id), scanned_consumers(g, id)) << "value " << g.value(id).name << " after " << after;
    EXPECT_EQ(g.is_graph_output(id), std::find(g.outputs().begin(), g.outputs().end(), id) != g.outputs().end())
        << g.value(id).name << " after " << after;
  }
}

// Every edit goes through the graph, so the readers index stays exact: checked against a
// scan after each of a long run of seeded edits of every kind (inserts, erases, input and
// use replacements, reorders, output changes), on a graph whose nodes read values twice.
TEST(Graph, ConsumerIndexMatchesAScanAfterEveryEdit) {
  Graph g;
  std::vector<ValueId> values{g.add_input({.name = "x", .shape = {2}})};
  for (int i = 0; i < 12; ++i) {
    const ValueId out = g.add_value({.name = "v" + std::to_string(i), .shape = {2}});
    g.add_node({.name = "n" + std::to_string(i),
                .op = "Add",
                .inputs = {values[static_cast<size_t>(i) / 2], values.back()},
                .outputs = {out}});
    values.push_back(out);
  }
  g.mark_output(values.back());
  expect_index_exact(g, "building");
  std::mt19937 rng(7);
  const auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  for (int edit = 0; edit < 400; ++edit) {
    const std::vector<NodeId> live = g.order();
    const NodeId n = live[pick(live.size())];
    const ValueId some = values[pick(values.size())];
    std::string what;
    switch (edit % 7) {
      case 0: {  // a new node before n, reading what n reads
        const ValueId out = g.add_value({.name = g.unique_name("w"), .shape = {2}});
        g.insert_node_before(n, {.name = "ins", .op = "Relu", .inputs = {g.node(n).inputs[0]}, .outputs = {out}});
        values.push_back(out);
        what = "insert_node_before";
        break;
      }
      case 1:
        g.set_input(n, pick(g.node(n).inputs.size()), some);
        what = "set_input";
        break;
      case 2:
        g.replace_uses_in(n, g.node(n).inputs[0], some);
        what = "replace_uses_in";
        break;
      case 3:
        g.replace_all_uses(g.node(n).inputs.back(), some);
        what = "replace_all_uses";
        break;
      case 4:
        if (live.size() > 4) g.erase_node(n);
        what = "erase_node";
        break;
      case 5: {  // the same nodes, reversed where no edge forbids it: refused or applied
        std::vector<NodeId> reversed(live.rbegin(), live.rend());
        try {
          g.set_order(reversed);
        } catch (const Error&) {
        }
        g.set_inputs(n, {some, some});
        what = "set_order, set_inputs";
        break;
      }
      case 6:
        g.set_graph_outputs({some, values.back()});
        what = "set_graph_outputs";
        break;
    }
    expect_index_exact(g, what);
    if (::testing::Test::HasFailure()) break;
  }
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
