// Patch-based execution: receptive-field boxes and clone pads checked by hand on small
// cases, the rewrite's refusals, and patched graphs that run bit-identically to the
// layer-by-layer run, on their own and inside their planned arenas, on hand-built graphs
// and on torchvision's mobilenet_v2 as the exporter writes it.
#include "memledger/fit/patch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "corpus.h"
#include "memledger/core/error.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/fit/patch_rules.h"
#include "memledger/ir/accumulate_pool.h"
#include "memledger/ir/verifier.h"
#include "memledger/ir/write_patch.h"
#include "memledger/onnx/import.h"
#include "memledger/onnx/tensor_file.h"
#include "memledger/plan/memory_plan.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using testing::add_act;
using testing::add_same_conv;
using testing::kNCHW;
using testing::pattern;

struct Built {
  Graph graph;
  ValueId x, y;
};

// y = op(x) for a window op on a 1×2×8×8 input (Conv: 4 maps, with bias).
Built window_graph(const std::string& op, int64_t k, int64_t s, int64_t p, int64_t h = 8, int64_t w = 8) {
  Built b;
  Graph& g = b.graph;
  b.x = g.add_input({.name = "x", .shape = {1, 2, h, w}, .roles = kNCHW});
  const int64_t oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
  const int64_t maps = op == "Conv" ? 4 : 2;
  b.y = add_act(g, "y", {1, maps, oh, ow});
  Node node{.name = "n", .op = op, .inputs = {b.x}, .outputs = {b.y}};
  node.attributes = {{"strides", std::vector<int64_t>{s, s}}, {"pads", std::vector<int64_t>{p, p, p, p}}};
  if (op == "Conv") {
    node.inputs.push_back(g.add_constant("w", pattern(DType::kFloat32, {maps, 2, k, k}, 3)));
    node.inputs.push_back(g.add_constant("b", pattern(DType::kFloat32, {maps}, 5)));
  } else {
    node.attributes["kernel_shape"] = std::vector<int64_t>{k, k};
  }
  g.add_node(std::move(node));
  g.mark_output(b.y);
  return b;
}

const Node& only_node(const Graph& g) { return g.node(g.order().at(0)); }

TEST(PatchRules, Conv3x3Stride1Pad1) {
  const Built b = window_graph("Conv", 3, 1, 1);
  const Node& n = only_node(b.graph);
  // Output rows 0..3, columns 4..7 of 8x8: one row/column of halo, clipped at the image edge.
  const Box out{0, 4, 4, 8};
  EXPECT_EQ(needed_input_box(b.graph, n, 0, out), (Box{0, 5, 3, 8}));
  // Top and right are the image's border: the original pad stays there, none inside.
  EXPECT_EQ(std::get<std::vector<int64_t>>(patched_attributes(b.graph, n, out).at("pads")),
            (std::vector<int64_t>{1, 0, 0, 1}));
  // An interior patch: halo on all sides, no pads.
  EXPECT_EQ(needed_input_box(b.graph, n, 0, Box{3, 5, 2, 6}), (Box{2, 6, 1, 7}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(patched_attributes(b.graph, n, Box{3, 5, 2, 6}).at("pads")),
            (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(PatchRules, Conv3x3Stride2Pad1) {
  const Built b = window_graph("Conv", 3, 2, 1);  // 8x8 → 4x4
  const Node& n = only_node(b.graph);
  // Output rows 2..3 read input rows 2·2−1 = 3 to 3·2−1+2 = 7; columns 0..1 read −1..3.
  EXPECT_EQ(needed_input_box(b.graph, n, 0, Box{2, 4, 0, 2}), (Box{3, 8, 0, 4}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(patched_attributes(b.graph, n, Box{2, 4, 0, 2}).at("pads")),
            (std::vector<int64_t>{0, 1, 0, 0}));
  // The last output row's window ends at input row 7 (pad row 8 is never read): no bottom pad.
  EXPECT_EQ(needed_input_box(b.graph, n, 0, Box{3, 4, 3, 4}), (Box{5, 8, 5, 8}));
}

TEST(PatchRules, PointwiseConvAndPoolsAndElementwise) {
  const Built one = window_graph("Conv", 1, 1, 0);
  EXPECT_EQ(needed_input_box(one.graph, only_node(one.graph), 0, Box{1, 3, 2, 7}), (Box{1, 3, 2, 7}));
  const Built max = window_graph("MaxPool", 3, 2, 1);  // 8x8 → 4x4
  EXPECT_EQ(needed_input_box(max.graph, only_node(max.graph), 0, Box{0, 2, 2, 4}), (Box{0, 4, 3, 8}));
  const Built avg = window_graph("AveragePool", 2, 2, 0);  // 8x8 → 4x4
  EXPECT_EQ(needed_input_box(avg.graph, only_node(avg.graph), 0, Box{1, 3, 0, 1}), (Box{2, 6, 0, 2}));
  Node relu{.op = "Relu"};
  EXPECT_EQ(needed_input_box(one.graph, relu, 0, Box{1, 2, 3, 4}), (Box{1, 2, 3, 4}));
}

TEST(PatchRules, MacsOfConvGemmAndMatMul) {
  Graph g;
  const ValueId a = g.add_input({.name = "a", .shape = {4, 6}});
  const ValueId w = g.add_constant("w", pattern(DType::kFloat32, {5, 6}, 1));
  const ValueId y = add_act(g, "y", {4, 5}), z = add_act(g, "z", {4, 5, 7}), b = add_act(g, "b", {4, 5, 3});
  // Gemm with transB: [4,6]·[6,5] → 4·5 outputs of 6 products each.
  g.add_node({.name = "fc", .op = "Gemm", .inputs = {a, w}, .outputs = {y}, .attributes = {{"transB", int64_t{1}}}});
  const Node& fc = g.node(g.order().back());
  EXPECT_EQ(node_macs(g, fc), 4 * 5 * 6);
  // MatMul [4,5,3]·[3,7]: 4·5·7 outputs of 3.
  const ValueId m = g.add_constant("m", pattern(DType::kFloat32, {3, 7}, 2));
  g.add_node({.name = "mm", .op = "MatMul", .inputs = {b, m}, .outputs = {z}});
  EXPECT_EQ(node_macs(g, g.node(g.order().back())), 4 * 5 * 7 * 3);
  // A depthwise Conv: each output is one channel's 3x3 taps.
  const Built dw = window_graph("Conv", 3, 1, 1);
  Graph d = dw.graph;
  const ValueId w1 = d.add_constant("w1", pattern(DType::kFloat32, {4, 1, 3, 3}, 3));
  const NodeId conv = d.order().at(0);
  d.attributes(conv)["group"] = int64_t{2};
  d.set_input(conv, 1, w1);
  EXPECT_EQ(node_macs(d, d.node(conv)), 64 * 4 * 9);
}

// x → Conv 3x3 p1 → Relu → y; z = Add(x, y): the residual needs a crop of x, whose patch box
// is the Conv's (one wider).
Built residual_graph() {
  Built b;
  Graph& g = b.graph;
  b.x = g.add_input({.name = "x", .shape = {1, 3, 8, 8}, .roles = kNCHW});
  const ValueId w = g.add_constant("w", pattern(DType::kFloat32, {3, 3, 3, 3}, 1));
  const ValueId c = add_act(g, "c", {1, 3, 8, 8}), r = add_act(g, "r", {1, 3, 8, 8});
  b.y = add_act(g, "z", {1, 3, 8, 8});
  g.add_node(
      {.name = "conv",
       .op = "Conv",
       .inputs = {b.x, w},
       .outputs = {c},
       .attributes = {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  g.add_node({.name = "relu", .op = "Relu", .inputs = {c}, .outputs = {r}});
  g.add_node({.name = "add", .op = "Add", .inputs = {b.x, r}, .outputs = {b.y}});
  g.mark_output(b.y);
  return b;
}

const Value* find_value(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.value_count(); ++i)
    if (g.value(ValueId{static_cast<int32_t>(i)}).name == name) return &g.value(ValueId{static_cast<int32_t>(i)});
  return nullptr;
}

std::string describe(const ArenaRunReport& r) {
  std::string s = r.failure;
  for (const auto& v : r.violations) s += "\n" + v.message;
  for (const auto& d : r.differing_outputs) s += "\n" + d;
  return s;
}

// Every WritePatch after a stage's first writes over the previous patches' buffer.
void expect_written_in_place(const Graph& g, const MemoryPlan& plan, bool one_patch = false) {
  int writes = 0;
  for (const LiveBuffer& b : plan.liveness.buffers) {
    if (!b.value.valid()) continue;
    const NodeId producer = g.value(b.value).producer;
    if (!producer.valid() || !is_write_patch(g.node(producer)) || !g.node(producer).inputs[0].valid()) continue;
    EXPECT_TRUE(b.alias_of.has_value()) << b.name;
    ++writes;
  }
  EXPECT_EQ(writes > 0, !one_patch);
}

// The patched graph gives bit-identical outputs, on the heap and inside its planned arena.
void expect_same_numbers(const Graph& original, const PatchedGraph& patched, const std::vector<Tensor>& inputs) {
  verify_graph(patched.graph);
  const std::vector<Tensor> reference = run_graph(original, inputs, {.kernels = KernelSet::kReference});
  const std::vector<Tensor> got = run_graph(patched.graph, inputs, {.kernels = KernelSet::kReference});
  ASSERT_EQ(got.size(), reference.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == reference[i]) << "output " << i << " differs";
  const MemoryPlan plan = plan_memory(patched.graph, with_model_dtypes(resolve_device("host")));
  const ArenaRunReport r = run_in_arena(patched.graph, plan, inputs, reference);
  EXPECT_TRUE(r.clean()) << describe(r);
  expect_written_in_place(patched.graph, plan, patched.rows * patched.cols == 1);
}

TEST(Patch, ResidualAddReadsACropAndRunsBitIdentically) {
  const Built b = residual_graph();
  const PatchedGraph p = apply_patches(b.graph, {.split = b.y, .rows = 2, .cols = 2});
  EXPECT_EQ(p.rows, 2);
  EXPECT_EQ(p.split_name, "z");
  // Patch (0,0) of z is [0,4)x[0,4); the Conv needs x on [0,5)x[0,5), the Add the crop [0,4)x[0,4).
  // The Conv reads its crop of x first (named first), the Add its own.
  const Value* conv_in = find_value(p.graph, "x.p0_0.crop");
  ASSERT_NE(conv_in, nullptr);
  EXPECT_EQ(conv_in->shape, (Shape{1, 3, 5, 5}));
  const Value* add_in = find_value(p.graph, "x.p0_0.crop_1");
  ASSERT_NE(add_in, nullptr);
  EXPECT_EQ(add_in->shape, (Shape{1, 3, 4, 4}));
  const Value* conv_out = find_value(p.graph, "c.p0_0");
  ASSERT_NE(conv_out, nullptr);
  EXPECT_EQ(conv_out->shape, (Shape{1, 3, 4, 4}));
  // Interior borders have no pad: patch (1,1)'s Conv pads only bottom and right.
  for (NodeId n : p.graph.order())
    if (p.graph.node(n).name == "conv.p1_1") {
      EXPECT_EQ(p.graph.node(n).ints_attr("pads"), (std::vector<int64_t>{0, 0, 1, 1}));
    }
  // Per node a patch index, −1 for none; 4 patches of Slice, Slice, Conv, Relu, Add, WritePatch.
  ASSERT_EQ(p.patch_of_node.size(), p.graph.order().size());
  EXPECT_EQ(p.graph.order().size(), 24u);
  EXPECT_EQ(std::count(p.patch_of_node.begin(), p.patch_of_node.end(), 3), 6);
  // MACs: 8·8·3 outputs × 3·9 taps; patched, each 4x4 Conv patch computes 16·3 × 27.
  EXPECT_EQ(p.original_macs, 64 * 3 * 27);
  EXPECT_EQ(p.patched_macs, 4 * 16 * 3 * 27);
  EXPECT_EQ(p.extra_macs(), 0);
  expect_same_numbers(b.graph, p, random_inputs(b.graph, 3));
}

TEST(Patch, WindowsOnEveryGridRunBitIdentically) {
  for (const auto& [op, k, s, pad] : std::vector<std::tuple<std::string, int, int, int>>{{"Conv", 3, 1, 1},
                                                                                         {"Conv", 3, 2, 1},
                                                                                         {"Conv", 1, 1, 0},
                                                                                         {"Conv", 5, 2, 2},
                                                                                         {"MaxPool", 3, 2, 1},
                                                                                         {"AveragePool", 3, 1, 1},
                                                                                         {"AveragePool", 2, 2, 0}}) {
    const Built b = window_graph(op, k, s, pad, 13, 11);
    const int64_t oh = b.graph.value(b.y).shape[2], ow = b.graph.value(b.y).shape[3];
    for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {3, 2}, {4, 5}}) {
      if (rows > oh || cols > ow) continue;
      SCOPED_TRACE(fmt::format("{} k{} s{} p{} grid {}x{}", op, k, s, pad, rows, cols));
      const PatchedGraph p = apply_patches(b.graph, {.split = b.y, .rows = rows, .cols = cols});
      // One layer recomputes nothing: its patches' outputs do not overlap.
      EXPECT_EQ(p.extra_macs(), 0);
      expect_same_numbers(b.graph, p, random_inputs(b.graph, 11));
    }
  }
}

TEST(Patch, TwoConvsRecomputeTheHaloOfTheFirst) {
  // x 2x8x8 → Conv 3x3 p1 (4 maps) → c → Conv 3x3 p1 (4 maps) → y, 2x2 patches: each patch
  // of y needs c on 5x5 (one row and column of halo), 100 positions of c instead of 64.
  Built b = window_graph("Conv", 3, 1, 1);
  Graph& g = b.graph;
  const ValueId y2 = add_act(g, "y2", {1, 4, 8, 8});
  g.add_node(
      {.name = "conv2",
       .op = "Conv",
       .inputs = {b.y, g.add_constant("w2", pattern(DType::kFloat32, {4, 4, 3, 3}, 7))},
       .outputs = {y2},
       .attributes = {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  g.set_graph_outputs({y2});
  const PatchedGraph p = apply_patches(g, {.split = y2, .rows = 2, .cols = 2});
  EXPECT_EQ(p.original_macs, 64 * 4 * 2 * 9 + 64 * 4 * 4 * 9);
  EXPECT_EQ(p.extra_macs(), (100 - 64) * 4 * 2 * 9);
  const Value* c = find_value(p.graph, "y.p1_0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->shape, (Shape{1, 4, 5, 5}));
  expect_same_numbers(g, p, random_inputs(g, 5));
}

TEST(Patch, BranchesJoinedByAConcatRunBitIdentically) {
  // x → Conv 3x3 s1 p1 (a) and MaxPool 3x3 s1 p1 → Conv 1x1 (b); y = Concat(a, b) over
  // channels: two branches with different halos meet again.
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 2, 9, 10}, .roles = kNCHW});
  const ValueId a = add_act(g, "a", {1, 3, 9, 10}), m = add_act(g, "m", {1, 2, 9, 10}),
                b = add_act(g, "b", {1, 2, 9, 10}), y = add_act(g, "y", {1, 5, 9, 10});
  g.add_node({.name = "conv_a",
              .op = "Conv",
              .inputs = {x, g.add_constant("wa", pattern(DType::kFloat32, {3, 2, 3, 3}, 2))},
              .outputs = {a},
              .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  g.add_node(
      {.name = "pool",
       .op = "MaxPool",
       .inputs = {x},
       .outputs = {m},
       .attributes = {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  g.add_node({.name = "conv_b",
              .op = "Conv",
              .inputs = {m, g.add_constant("wb", pattern(DType::kFloat32, {2, 2, 1, 1}, 4))},
              .outputs = {b}});
  g.add_node({.name = "cat", .op = "Concat", .inputs = {a, b}, .outputs = {y}, .attributes = {{"axis", int64_t{1}}}});
  g.mark_output(y);
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{2, 2}, {3, 4}}) {
    const PatchedGraph p = apply_patches(g, {.split = y, .rows = rows, .cols = cols});
    EXPECT_EQ(p.extra_macs(), 0);  // no layer's output is needed on overlapping boxes
    expect_same_numbers(g, p, random_inputs(g, 13));
  }
}

// A squeeze-and-excitation block as torchvision exports it, inside a stage:
// x → Conv 3x3 → Relu → a; GlobalAveragePool(a) → Conv 1x1 → Relu → Conv 1x1 → Sigmoid → g;
// m = Mul(g, a); y = Conv 3x3 (m) → out.
struct SqueezeExcitation {
  Graph graph;
  ValueId a, m, y, out;
};

SqueezeExcitation squeeze_excitation_graph(int64_t h = 8, int64_t w = 8) {
  SqueezeExcitation se;
  Graph& g = se.graph;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 3, h, w}, .roles = kNCHW});
  auto conv = [&](const std::string& name, ValueId in, int64_t k, const Shape& out_shape) {
    const ValueId y = add_act(g, name, out_shape);
    add_same_conv(g, name, in, y, k, 3, true);
    return y;
  };
  auto unary = [&](const std::string& op, const std::string& name, ValueId in) {
    const ValueId y = add_act(g, name, g.value(in).shape);
    g.add_node({.name = name, .op = op, .inputs = {in}, .outputs = {y}});
    return y;
  };
  se.a = unary("Relu", "a", conv("c1", x, 3, {1, 8, h, w}));
  const ValueId pooled = add_act(g, "pooled", {1, 8, 1, 1});
  g.add_node({.name = "gap", .op = "GlobalAveragePool", .inputs = {se.a}, .outputs = {pooled}});
  const ValueId fc1 = unary("Relu", "fc1.relu", conv("fc1", pooled, 1, {1, 2, 1, 1}));
  const ValueId gate = unary("Sigmoid", "gate", conv("fc2", fc1, 1, {1, 8, 1, 1}));
  se.m = add_act(g, "m", {1, 8, h, w});
  g.add_node({.name = "scale", .op = "Mul", .inputs = {gate, se.a}, .outputs = {se.m}});
  se.y = conv("c2", se.m, 3, {1, 4, h, w});
  se.out = conv("c3", se.y, 1, {1, 2, h, w});
  g.mark_output(se.out);
  return se;
}

TEST(Patch, SqueezeExcitationInsideAStageRunsAPoolPassBitIdentically) {
  const SqueezeExcitation se = squeeze_excitation_graph();
  const Graph& g = se.graph;
  auto names = [&](const std::vector<ValueId>& values) {
    std::vector<std::string> out;
    for (ValueId v : values) out.push_back(g.value(v).name);
    return out;
  };
  // Through the pool, m, c2 and c3 are splits; without pool passes every stage ends before it.
  EXPECT_EQ(names(patch_split_candidates(g)), (std::vector<std::string>{"c1", "a", "m", "c2", "c3"}));
  EXPECT_EQ(names(patch_split_candidates(g, {}, false)), (std::vector<std::string>{"c1", "a"}));

  const PatchedGraph p = apply_patches(g, {.split = se.y, .rows = 2, .cols = 2});
  EXPECT_EQ(p.pool_names, (std::vector<std::string>{"pooled"}));
  ASSERT_EQ(p.pool_pass_of_node.size(), p.graph.order().size());
  ASSERT_EQ(p.pool_strip_of_node.size(), p.graph.order().size());
  // The pass: rows × cols = 4 row strips of a, each Conv, Relu, AccumulatePool (and crops of x);
  // it runs before the gate, which runs before the patches; its steps are in no patch.
  int accumulates = 0, last_pass = -1, first_patch = -1, gate_at = -1;
  for (size_t i = 0; i < p.graph.order().size(); ++i) {
    const Node& node = p.graph.node(p.graph.order()[i]);
    if (p.pool_pass_of_node[i] >= 0) {
      EXPECT_EQ(p.pool_pass_of_node[i], 0);
      EXPECT_EQ(p.patch_of_node[i], -1) << node.label();
      EXPECT_GE(p.pool_strip_of_node[i], 0);
      EXPECT_LT(p.pool_strip_of_node[i], 4);
      last_pass = static_cast<int>(i);
    } else {
      EXPECT_EQ(p.pool_strip_of_node[i], -1);
    }
    if (node.op == "AccumulatePool") {
      ++accumulates;
      const Shape& strip = p.graph.value(node.inputs[0]).shape;
      EXPECT_EQ(strip, (Shape{1, 8, 2, 8})) << node.label();  // whole rows
      EXPECT_EQ(node.int_attr("count", -1), accumulates == 4 ? 64 : 0);
    }
    if (node.name == "gate") gate_at = static_cast<int>(i);
    if (p.patch_of_node[i] >= 0 && first_patch < 0) first_patch = static_cast<int>(i);
    EXPECT_NE(node.op, "GlobalAveragePool");
  }
  EXPECT_EQ(accumulates, 4);
  EXPECT_LT(last_pass, gate_at);
  EXPECT_LT(gate_at, first_patch);
  EXPECT_GT(p.extra_macs(), 0);  // the pass recomputes c1
  expect_same_numbers(g, p, random_inputs(g, 29));

  // One strip per row, uneven strips, and a grid of one column: the same numbers.
  for (int pool_rows : {8, 3, 1})
    expect_same_numbers(g, apply_patches(g, {.split = se.y, .rows = 2, .cols = 2, .pool_rows = pool_rows}),
                        random_inputs(g, 31));
  expect_same_numbers(g, apply_patches(g, {.split = se.m, .rows = 4, .cols = 1}), random_inputs(g, 37));
  // Patches of patches through the pool: the outer stage holds it, the inner grid runs before it.
  const PatchedGraph nested =
      apply_nested_patches(g, {.split = se.y, .rows = 2, .cols = 1}, {.split = se.a, .rows = 2, .cols = 2});
  EXPECT_EQ(nested.pool_names, (std::vector<std::string>{"pooled"}));
  expect_same_numbers(g, nested, random_inputs(g, 41));
}

TEST(Patch, APoolOfTheStageInputPoolsCropsOfIt) {
  // x → GlobalAveragePool → Conv 1x1 → Sigmoid → g; m = Mul(x, g); y = Conv 3x3 (m).
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 3, 6, 6}, .roles = kNCHW});
  const ValueId pooled = add_act(g, "pooled", {1, 3, 1, 1}), fc = add_act(g, "fc", {1, 3, 1, 1}),
                gate = add_act(g, "gate", {1, 3, 1, 1}), m = add_act(g, "m", {1, 3, 6, 6}),
                y = add_act(g, "y", {1, 2, 6, 6});
  g.add_node({.name = "gap", .op = "GlobalAveragePool", .inputs = {x}, .outputs = {pooled}});
  add_same_conv(g, "fc", pooled, fc, 1, 2);
  g.add_node({.name = "gate", .op = "Sigmoid", .inputs = {fc}, .outputs = {gate}});
  g.add_node({.name = "scale", .op = "Mul", .inputs = {x, gate}, .outputs = {m}});
  add_same_conv(g, "conv", m, y, 3, 4);
  g.mark_output(y);
  const PatchedGraph p = apply_patches(g, {.split = y, .rows = 2, .cols = 2});
  int accumulates = 0;
  int64_t rows = 0;
  for (NodeId n : p.graph.order())
    if (p.graph.node(n).op == "AccumulatePool") {
      ++accumulates;
      const Shape& strip = p.graph.value(p.graph.node(n).inputs[0]).shape;  // a crop of x, whole rows
      EXPECT_EQ(strip[3], 6);
      rows += strip[2];
    }
  EXPECT_EQ(accumulates, 4);
  EXPECT_EQ(rows, 6);  // every row of x once
  expect_same_numbers(g, p, random_inputs(g, 43));
}

TEST(Patch, ALaterStageWhosePoolReadsAValueBeforeItIsRefused) {
  // x → Conv → a → Conv → b; the stage from b pools a (computed before it) for its gate.
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 2, 6, 6}, .roles = kNCHW});
  const ValueId a = add_act(g, "a", {1, 2, 6, 6}), b = add_act(g, "b", {1, 2, 6, 6}),
                pooled = add_act(g, "pooled", {1, 2, 1, 1}), gate = add_act(g, "gate", {1, 2, 1, 1}),
                y = add_act(g, "y", {1, 2, 6, 6});
  add_same_conv(g, "c1", x, a, 3, 1);
  add_same_conv(g, "c2", a, b, 3, 2);
  g.add_node({.name = "gap", .op = "GlobalAveragePool", .inputs = {a}, .outputs = {pooled}});
  g.add_node({.name = "gate", .op = "Sigmoid", .inputs = {pooled}, .outputs = {gate}});
  g.add_node({.name = "scale", .op = "Mul", .inputs = {b, gate}, .outputs = {y}});
  g.mark_output(y);
  try {
    apply_patches(g, {.split = y, .rows = 2, .cols = 2, .after = b});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("GlobalAveragePool 'gap' in its stage pools 'a', which the stage does not compute"),
        std::string::npos)
        << e.what();
  }
  // From the graph input the stage computes a: the same split patches, bit-identically.
  expect_same_numbers(g, apply_patches(g, {.split = y, .rows = 2, .cols = 2}), random_inputs(g, 47));
}

TEST(Patch, AccumulatePoolChecksItsTypes) {
  const SqueezeExcitation se = squeeze_excitation_graph();
  const PatchedGraph p = apply_patches(se.graph, {.split = se.y, .rows = 2, .cols = 2});
  for (NodeId n : p.graph.order()) {
    const Node& node = p.graph.node(n);
    if (node.op != "AccumulatePool") continue;
    EXPECT_EQ(check_accumulate_pool(p.graph, node), "");
    Node wrong = node;
    wrong.attributes["count"] = int64_t{node.int_attr("count", 0) > 0 ? 0 : 64};  // the output's dtype no longer fits
    EXPECT_NE(check_accumulate_pool(p.graph, wrong).find("with count"), std::string::npos);
  }
}

TEST(Patch, RefusesWhatCannotApply) {
  const Built b = residual_graph();
  auto message = [&](const PatchSpec& spec) {
    try {
      apply_patches(b.graph, spec);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({.split = b.y, .rows = 9, .cols = 1}).find("a 9x1 grid does not fit its 8x8"), std::string::npos);
  EXPECT_NE(message({.split = b.y, .rows = 0, .cols = 1}).find("grid"), std::string::npos);
  EXPECT_NE(message({.split = b.x, .rows = 2, .cols = 2}).find("cannot patch at 'x': it is a graph input"),
            std::string::npos);
  // An operator without a patch rule in the stage is refused by name.
  Graph g = b.graph;
  const ValueId pooled = add_act(g, "pooled", {1, 3, 1, 1});
  g.add_node({.name = "gmp", .op = "GlobalMaxPool", .inputs = {b.y}, .outputs = {pooled}});
  g.set_graph_outputs({pooled});
  try {
    apply_patches(g, {.split = pooled, .rows = 1, .cols = 1});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GlobalMaxPool 'gmp'"), std::string::npos) << e.what();
  }
  // A global average pool's result is no split: its pass computes it for the patches after it.
  Graph with_gap = b.graph;
  const ValueId mean = add_act(with_gap, "mean", {1, 3, 1, 1});
  with_gap.add_node({.name = "gap", .op = "GlobalAveragePool", .inputs = {b.y}, .outputs = {mean}});
  with_gap.set_graph_outputs({mean});
  try {
    apply_patches(with_gap, {.split = mean, .rows = 1, .cols = 1});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot patch at 'mean': it is a global pool's result"), std::string::npos)
        << e.what();
  }
  const std::vector<ValueId> candidates = patch_split_candidates(g);
  // Splitting at c leaves the graph input x read outside the stage too, which is allowed;
  // pooled's stage holds the GlobalMaxPool.
  std::vector<std::string> names;
  for (ValueId v : candidates) names.push_back(g.value(v).name);
  EXPECT_EQ(names, (std::vector<std::string>{"c", "r", "z"}));
}

TEST(Patch, StageThatLeaksAValueIsNotACandidate) {
  // x → conv → c → relu → r; out2 = Add(c, r) reads c outside the stage of r.
  Built b = residual_graph();
  Graph& g = b.graph;
  const ValueId c{2};
  ASSERT_EQ(g.value(c).name, "c");
  const std::vector<ValueId> candidates = patch_split_candidates(g);
  ASSERT_FALSE(candidates.empty());
  const ValueId r = candidates[1];
  ASSERT_EQ(g.value(r).name, "r");
  const ValueId side = add_act(g, "side", {1, 3, 8, 8});
  g.add_node({.name = "side", .op = "Mul", .inputs = {c, b.x}, .outputs = {side}});
  g.mark_output(side);
  try {
    apply_patches(g, {.split = r, .rows = 2, .cols = 2});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'c' of its stage is also read by node Mul 'side' outside it"),
              std::string::npos)
        << e.what();
  }
}

TEST(Patch, PatchesOfPatchesRunBitIdentically) {
  const Built b = residual_graph();
  const PatchedGraph p =
      apply_nested_patches(b.graph, {.split = b.y, .rows = 2, .cols = 2}, {.split = ValueId{3}, .rows = 2, .cols = 2});
  ASSERT_EQ(p.inner_split_name, "r");
  // Each outer patch's Relu output (4x4) is now written by four 2x2 inner patches.
  int writes = 0;
  for (NodeId n : p.graph.order()) writes += is_write_patch(p.graph.node(n)) ? 1 : 0;
  EXPECT_EQ(writes, 4 + 4 * 4);
  // Node by node: the outer patch, and inside it the inner patch of the nodes up to r.
  ASSERT_EQ(p.inner_patch_of_node.size(), p.graph.order().size());
  for (size_t i = 0; i < p.graph.order().size(); ++i) {
    const Node& node = p.graph.node(p.graph.order()[i]);
    EXPECT_GE(p.patch_of_node[i], 0) << node.name;
    if (node.op == "Conv" || node.op == "Relu") {
      EXPECT_GE(p.inner_patch_of_node[i], 0) << node.name;
    }
    if (node.op == "Add") {
      EXPECT_EQ(p.inner_patch_of_node[i], -1) << node.name;
    }
  }
  // An inner split outside the outer stage is refused.
  EXPECT_THROW(
      apply_nested_patches(b.graph, {.split = ValueId{3}, .rows = 2, .cols = 2}, {.split = b.y, .rows = 2, .cols = 2}),
      Error);
  expect_same_numbers(b.graph, p, random_inputs(b.graph, 9));
}

// A later stage must start at its start value only: one that also reads another graph input
// is refused, naming that input.
TEST(PatchRewrite, ALaterStageReadingAnotherGraphInputIsRefused) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 2, 8, 8}, .roles = kNCHW});
  const ValueId z = g.add_input({.name = "z", .shape = {1, 2, 8, 8}, .roles = kNCHW});
  const ValueId a = add_act(g, "a", {1, 2, 8, 8}), b = add_act(g, "b", {1, 2, 8, 8}), c = add_act(g, "c", {1, 2, 8, 8});
  g.add_node({.name = "r1", .op = "Relu", .inputs = {x}, .outputs = {a}});
  g.add_node({.name = "add", .op = "Add", .inputs = {a, z}, .outputs = {b}});
  g.add_node({.name = "r2", .op = "Relu", .inputs = {b}, .outputs = {c}});
  g.mark_output(c);
  try {
    apply_patches(g, {.split = c, .rows = 2, .cols = 2, .after = a});
    ADD_FAILURE() << "a later stage reading graph input 'z' was patched";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reads graph input 'z' besides its start 'a'"), std::string::npos) << e.what();
  }
  // Started at the graph inputs instead, the same stage patches.
  EXPECT_NO_THROW(apply_patches(g, {.split = c, .rows = 2, .cols = 2}));
}

// ---- torchvision's mobilenet_v2 (BatchNorm folded by the exporter) ----

TEST(PatchCorpus, MobileNetV2PatchedRunsBitIdenticallyInsideItsArena) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  const Graph g = import_onnx_file((dir / "mobilenet_v2.onnx").string());
  const std::vector<ValueId> candidates = patch_split_candidates(g);
  ASSERT_GE(candidates.size(), 10u);
  const std::vector<Tensor> inputs{read_tensor_file((dir / "mobilenet_v2.input.npy").string()).tensor};
  const std::vector<Tensor> reference = run_graph(g, inputs, {.kernels = KernelSet::kReference});
  // The first candidates are the stem Conv and its Clip; take splits a few blocks in.
  for (const auto& [index, rows, cols] :
       std::vector<std::tuple<size_t, int, int>>{{4, 2, 2}, {7, 3, 3}, {9, 4, 4}, {12, 5, 3}}) {
    ASSERT_LT(index, candidates.size());
    const ValueId split = candidates[index];
    SCOPED_TRACE(fmt::format("split '{}' {}x{}", g.value(split).name, rows, cols));
    const PatchedGraph p = apply_patches(g, {.split = split, .rows = rows, .cols = cols});
    EXPECT_GT(p.extra_macs(), 0);
    // torchvision's own figure for mobilenet_v2 is 300 M multiply-adds.
    EXPECT_EQ(p.original_macs, graph_macs(g));
    EXPECT_NEAR(static_cast<double>(p.original_macs), 300.8e6, 0.1e6);
    const std::vector<Tensor> got = run_graph(p.graph, inputs, {.kernels = KernelSet::kReference});
    ASSERT_EQ(got.size(), reference.size());
    EXPECT_TRUE(got[0] == reference[0]);
    const MemoryPlan plan = plan_memory(p.graph, with_model_dtypes(resolve_device("host")));
    const ArenaRunReport r = run_in_arena(p.graph, plan, inputs, reference);
    EXPECT_TRUE(r.clean()) << describe(r);
    expect_written_in_place(p.graph, plan);
  }
  // Patches of patches, the configuration docs/benchmarks.md reports reaching 147 KiB: the
  // stage up to the end of block 7 in 2x1, each patch's own stage up to the end of block 4
  // in 3x4.
  auto end_of_block = [&](int block) {
    ValueId last;
    for (ValueId v : candidates)
      if (g.value(v).name.starts_with(fmt::format("/features/features.{}/", block))) last = v;
    return last;
  };
  const ValueId block7 = end_of_block(7), block4 = end_of_block(4);
  ASSERT_TRUE(block7.valid() && block4.valid());
  const PatchedGraph nested =
      apply_nested_patches(g, {.split = block7, .rows = 2, .cols = 1}, {.split = block4, .rows = 3, .cols = 4});
  EXPECT_EQ(nested.inner_rows * nested.inner_cols, 12);
  EXPECT_GT(nested.extra_macs(), 0);
  EXPECT_EQ(run_graph(nested.graph, inputs, {.kernels = KernelSet::kReference}).at(0), reference[0]);
  const MemoryPlan plan = plan_memory(nested.graph, with_model_dtypes(resolve_device("host")));
  const ArenaRunReport r = run_in_arena(nested.graph, plan, inputs, reference);
  EXPECT_TRUE(r.clean()) << describe(r);
  expect_written_in_place(nested.graph, plan);
}

// A second patched stage (PatchSpec::after): on mobilenet_v2 patched up to the end of block
// 2, the later stages start at that split, read it only through crops, and the graph with
// both stages runs bit-identically, also inside its arena.
TEST(PatchCorpus, ASecondStageStartsAtTheFirstOnesSplit) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  const Graph g = import_onnx_file((dir / "mobilenet_v2.onnx").string());
  const std::vector<ValueId> candidates = patch_split_candidates(g);
  ValueId block2;
  for (ValueId v : candidates)
    if (g.value(v).name.starts_with("/features/features.2/")) block2 = v;
  ASSERT_TRUE(block2.valid());
  const PatchedGraph first = apply_patches(g, {.split = block2, .rows = 2, .cols = 2});
  const std::vector<ValueId> later = patch_split_candidates(first.graph, block2);
  ASSERT_GE(later.size(), 5u);
  // Every later split comes after the first stage's in the order, none is the split itself.
  const auto& order = first.graph.order();
  const auto at = [&](ValueId v) { return std::find(order.begin(), order.end(), first.graph.value(v).producer); };
  for (ValueId v : later) EXPECT_GT(at(v), at(block2)) << first.graph.value(v).name;
  // Without the start, the same splits are no candidates: their stage would reach back
  // into the first stage's patches.
  const std::vector<ValueId> from_inputs = patch_split_candidates(first.graph);
  for (ValueId v : later)
    EXPECT_EQ(std::find(from_inputs.begin(), from_inputs.end(), v), from_inputs.end()) << first.graph.value(v).name;

  const std::vector<Tensor> inputs{read_tensor_file((dir / "mobilenet_v2.input.npy").string()).tensor};
  const std::vector<Tensor> reference = run_graph(g, inputs, {.kernels = KernelSet::kReference});
  const ValueId split2 = later[4];
  const PatchedGraph second = apply_patches(first.graph, {.split = split2, .rows = 3, .cols = 3, .after = block2});
  EXPECT_GT(second.extra_macs(), 0);
  // Each of the 3x3 grid's patches has nodes of its own (the last one too).
  for (int patch = 0; patch < 9; ++patch)
    EXPECT_GT(std::count(second.patch_of_node.begin(), second.patch_of_node.end(), patch), 0) << "patch " << patch;
  EXPECT_EQ(run_graph(second.graph, inputs, {.kernels = KernelSet::kReference}).at(0), reference[0]);
  const MemoryPlan plan = plan_memory(second.graph, with_model_dtypes(resolve_device("host")));
  const ArenaRunReport r = run_in_arena(second.graph, plan, inputs, reference);
  EXPECT_TRUE(r.clean()) << describe(r);
  expect_written_in_place(second.graph, plan);
  // A start the stage does not begin at (a value after its split) is refused, naming it.
  try {
    apply_patches(first.graph, {.split = split2, .rows = 2, .cols = 2, .after = later.back()});
    ADD_FAILURE() << "a stage that does not start at the given value was patched";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot patch at"), std::string::npos) << e.what();
  }
}

// mobilenet_v2 with BatchNormalization kept (the .bn export) under the MCU-like profile's
// layout (NHWC, 4-byte alignment; the arena run keeps the model's dtypes), and resnet18,
// whose first stage has a MaxPool and residual Adds.
TEST(PatchCorpus, BatchNormAndMaxPoolStagesRunBitIdenticallyInsideTheirArenas) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  DeviceProfile mcu = resolve_device("host");
  mcu.capacity_bytes = 0;
  mcu.alignment_bytes = 4;
  mcu.layout = ActivationLayout::kNHWC;
  mcu.storage = DType::kInt8;
  for (const auto& [model, height, rows, cols] :
       std::vector<std::tuple<std::string, int64_t, int, int>>{{"mobilenet_v2.bn", 28, 4, 4}, {"resnet18", 56, 3, 3}}) {
    SCOPED_TRACE(model);
    const Graph g = import_onnx_file((dir / (model + ".onnx")).string());
    // The last clean split at this resolution: the end of the stage at that stride.
    ValueId split;
    for (ValueId v : patch_split_candidates(g))
      if (g.value(v).shape[2] == height) split = v;
    ASSERT_TRUE(split.valid());
    const PatchedGraph p = apply_patches(g, {.split = split, .rows = rows, .cols = cols});
    bool has_bn = false, has_pool = false;
    for (NodeId n : p.graph.order()) {
      has_bn = has_bn || p.graph.node(n).op == "BatchNormalization";
      has_pool = has_pool || p.graph.node(n).op == "MaxPool";
    }
    EXPECT_TRUE(model == "resnet18" ? has_pool : has_bn);
    EXPECT_GT(p.extra_macs(), 0);
    const std::vector<Tensor> inputs = random_inputs(g, 21);
    const std::vector<Tensor> reference = run_graph(g, inputs, {.kernels = KernelSet::kReference});
    const MemoryPlan plan = plan_memory(p.graph, with_model_dtypes(mcu));
    const ArenaRunReport r = run_in_arena(p.graph, plan, inputs, reference);
    EXPECT_TRUE(r.clean()) << describe(r);
    expect_written_in_place(p.graph, plan);
  }
}

// Every model and variant of the corpus as the exporter wrote it: the deepest clean split
// (its stage stops before the first operator without a patch rule: efficientnet's first
// squeeze-excitation pool, shufflenet's first channel shuffle, the classifier's global pool;
// squeezenet's ceil-mode MaxPools and Concats stay inside) patched 2x2 runs bit-identically.
TEST(PatchCorpus, DeepestSplitOfEveryCorpusModelRunsBitIdentically) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  std::ifstream in(dir / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(in);
  int models = 0;
  for (const auto& [name, entry] : manifest.at("models").items())
    for (const auto& variant : entry.at("variants")) {
      const std::string file = variant.at("file").get<std::string>();
      SCOPED_TRACE(file);
      const Graph g = import_onnx_file((dir / file).string());
      const std::vector<ValueId> candidates = patch_split_candidates(g);
      ASSERT_FALSE(candidates.empty());
      const ValueId split = candidates.back();
      const PatchedGraph p = apply_patches(g, {.split = split, .rows = 2, .cols = 2});
      const std::vector<Tensor> inputs = random_inputs(g, 17);
      const std::vector<Tensor> reference = run_graph(g, inputs, {.kernels = KernelSet::kReference});
      const std::vector<Tensor> got = run_graph(p.graph, inputs, {.kernels = KernelSet::kReference});
      ASSERT_EQ(got.size(), reference.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == reference[i]) << g.value(split).name;
      std::printf("%-28s %2zu candidates, deepest '%s' %s, +%.1f%% MACs\n", file.c_str(), candidates.size(),
                  g.value(split).name.c_str(), shape_to_string(g.value(split).shape).c_str(),
                  100.0 * static_cast<double>(p.extra_macs()) / static_cast<double>(p.original_macs));
      ++models;
    }
  EXPECT_GE(models, 12);
}

}  // namespace
}  // namespace memledger
