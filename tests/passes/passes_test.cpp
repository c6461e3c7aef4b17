// Golden and numeric tests of every pass: a small graph built through the library, its
// text form before → pass → after checked against tests/golden/passes/<pass>/, and both
// graphs run on seeded inputs.
#include <gtest/gtest.h>

#include "memledger/exec/interpreter.h"
#include "memledger/ir/affine.h"
#include "memledger/onnx/export.h"
#include "memledger/onnx/import.h"
#include "memledger/passes/fold_constants.h"
#include "memledger/teaching/variants.h"
#include "pass_models.h"

namespace memledger {
namespace {

using namespace memledger::testing;

TEST(CompactConstants, TeachingModelExpandedParameters) {
  const Graph after = check_pass("compact-constants", "teaching_expanded", teaching::expanded_mul_add_model());
  EXPECT_LT(reachable_constant_bytes(after), reachable_constant_bytes(teaching::expanded_mul_add_model()));
}

TEST(CompactConstants, ChannelEqualsWidthDecidedFromValues) {
  // C == W == 20: a size rule could pick either axis; the values say axis 1.
  const Graph after = check_pass("compact-constants", "c_eq_w", mul_add({1, 20, 16, 20}, {1, 20, 16, 20}));
  EXPECT_EQ(reachable_constant_bytes(after), 2 * 20 * 4);
}

TEST(CompactConstants, DistinctValuesStay) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 3, 2, 2}, .roles = kNCHW});
  const ValueId c = g.add_constant("c", pattern(DType::kFloat32, {1, 3, 2, 2}, 1), kNCHW);
  const ValueId y = add_act(g, "y", {1, 3, 2, 2});
  g.add_node({.name = "add", .op = "Add", .inputs = {x, c}, .outputs = {y}});
  g.mark_output(y);
  check_pass("compact-constants", "distinct_values", g);
}

TEST(CompactConstants, NonBroadcastingConsumerGetsAnExpand) {
  // A MatMul weight whose rows repeat: stored compact behind an Expand.
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {4, 64}});
  Tensor w(DType::kFloat32, {64, 32});
  for (int64_t i = 0; i < w.elements(); ++i)
    w.data<float>()[static_cast<size_t>(i)] = 0.01f * static_cast<float>(i % 32);
  const ValueId wv = g.add_constant("w", w);
  const ValueId y = add_act(g, "y", {4, 32});
  g.add_node({.name = "mm", .op = "MatMul", .inputs = {x, wv}, .outputs = {y}});
  g.mark_output(y);
  check_pass("compact-constants", "matmul_behind_expand", g, {.expand_constants = true});
  check_pass("compact-constants", "matmul_not_asked", g);
}

TEST(LazyExpand, ExpandBeforeABroadcastingAdd) {
  Graph g;
  const Shape xs{1, 12, 20, 28};
  const ValueId x = g.add_input({.name = "x", .shape = xs, .roles = kNCHW});
  const ValueId b = g.add_constant("b", channel_values({1, 12, 1, 1}, 0.1f, 0.1f), kNCHW);
  const ValueId shape = add_int64(g, "shape", xs);
  const ValueId e = add_act(g, "b_full", xs), y = add_act(g, "y", xs);
  g.add_node({.name = "expand", .op = "Expand", .inputs = {b, shape}, .outputs = {e}});
  g.add_node({.name = "add", .op = "Add", .inputs = {x, e}, .outputs = {y}});
  g.mark_output(y);
  check_pass("lazy-expand", "expand_add", g);
}

TEST(LazyExpand, TileThatGrowsTheOutputStays) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 3, 1, 1}, .roles = kNCHW});
  const ValueId r = add_int64(g, "repeats", {1, 1, 2, 2});
  const ValueId t = add_act(g, "t", {1, 3, 2, 2}), y = add_act(g, "y", {1, 3, 2, 2});
  g.add_node({.name = "tile", .op = "Tile", .inputs = {x, r}, .outputs = {t}});
  g.add_node({.name = "relu", .op = "Relu", .inputs = {t}, .outputs = {y}});
  g.mark_output(y);
  check_pass("lazy-expand", "tile_relu_stays", g);
}

TEST(RepeatToPlainConv, SeedThreadTile) {
  check_pass("repeat-to-plain-conv", "tile", grouped_conv_over_repeat("tile"));
}
TEST(RepeatToPlainConv, Concat) { check_pass("repeat-to-plain-conv", "concat", grouped_conv_over_repeat("concat")); }
TEST(RepeatToPlainConv, ExpandReshape) {
  check_pass("repeat-to-plain-conv", "expand_reshape", grouped_conv_over_repeat("expand"));
}

TEST(FuseAffine, PerChannelMulAdd) { check_pass("fuse-affine", "mul_add", mul_add({1, 12, 20, 28}, {1, 12, 1, 1})); }
TEST(FuseAffine, ExpandedParametersComeOutCompact) {
  const Graph after = check_pass("fuse-affine", "teaching_expanded", teaching::expanded_mul_add_model());
  EXPECT_EQ(reachable_constant_bytes(after), 2 * 12 * 4);
}

Graph batchnorm_graph(bool after_conv) {
  Graph g;
  const Shape xs{1, 8, 6, 5};
  const ValueId x = g.add_input({.name = "x", .shape = xs, .roles = kNCHW});
  ValueId in = x;
  if (after_conv) {
    in = add_act(g, "c", xs);
    g.add_node(
        {.name = "conv",
         .op = "Conv",
         .inputs = {x, g.add_constant("w", pattern(DType::kFloat32, {8, 8, 3, 3}, 2)),
                    g.add_constant("cb", pattern(DType::kFloat32, {8}, 4))},
         .outputs = {in},
         .attributes = {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  }
  Tensor var = pattern(DType::kFloat32, {8}, 9);
  for (float& v : var.data<float>()) v = v * v + 0.5f;
  const ValueId y = add_act(g, "y", xs);
  g.add_node({.name = "bn",
              .op = "BatchNormalization",
              .inputs = {in, g.add_constant("gamma", pattern(DType::kFloat32, {8}, 6)),
                         g.add_constant("beta", pattern(DType::kFloat32, {8}, 7)),
                         g.add_constant("mean", pattern(DType::kFloat32, {8}, 8)), g.add_constant("var", var)},
              .outputs = {y}});
  g.mark_output(y);
  return g;
}

TEST(FuseAffine, BatchNormalization) { check_pass("fuse-affine", "batchnorm", batchnorm_graph(false)); }
TEST(FoldBatchNorm, IntoConv) { check_pass("fold-batchnorm", "conv_bn", batchnorm_graph(true)); }

TEST(UnitCoefficient, UnitScaleBecomesBiasAdd) {
  check_pass("unit-coefficient", "unit_scale", affine_between_relus(1.0f, 0.3f));
}
TEST(UnitCoefficient, UnitScaleZeroBiasIsIdentity) {
  const Graph after = check_pass("unit-coefficient", "identity", affine_between_relus(1.0f, 0.0f));
  EXPECT_EQ(after.order().size(), 2u);
}
TEST(UnitCoefficient, NearUnitLeftAloneUnlessAsked) {
  check_pass("unit-coefficient", "near_unit_exact", affine_between_relus(1.0001f, 0.0f));
  const Graph approx = check_pass("unit-coefficient", "near_unit_approximate", affine_between_relus(1.0001f, 0.0f),
                                  {.approximate_tolerance = 1e-3}, 1e-3);
  EXPECT_EQ(approx.order().size(), 2u);
}

TEST(UnitCoefficient, Int8SameParametersIsIdentity) {
  const Graph after = check_pass("unit-coefficient", "qdq_identity", qdq_chain(0.05f));
  EXPECT_EQ(after.order().size(), 2u);
}
TEST(UnitCoefficient, Int8DifferentParametersStayARequantize) {
  const Graph after = check_pass("unit-coefficient", "qdq_requantize", qdq_chain(0.1f));
  EXPECT_EQ(after.order().size(), 4u);
}

// Unit scale and zero bias between int8 DequantizeLinear and QuantizeLinear with other
// parameters: Mul and Add go, and one requantize (DequantizeLinear → QuantizeLinear) is
// all that is left between the int8 input and the int8 output.
TEST(UnitCoefficient, QdqAffineBecomesASingleRequantize) {
  const Graph after = check_pass("unit-coefficient", "qdq_affine_requantize", qdq_affine(0.1f, 1.0f, 0.0f), {}, 0);
  ASSERT_EQ(after.order().size(), 2u);
  EXPECT_EQ(after.node(after.order()[0]).op, "DequantizeLinear");
  EXPECT_EQ(after.node(after.order()[1]).op, "QuantizeLinear");
  // Valid ONNX at the model's opset: the checker accepts it and it reads back as two nodes.
  EXPECT_EQ(import_onnx_bytes(export_onnx_bytes(after)).order().size(), 2u);
  // With a scale of 2 only the Add of zero goes; the Mul is real work and stays.
  EXPECT_EQ(check_pass("unit-coefficient", "qdq_affine_scaled", qdq_affine(0.1f, 2.0f, 0.0f), {}, 0).order().size(),
            3u);
}

// int8 (zero point 0) requantized to uint8 (zero point 128) with the same scale: the same
// range, shifted; the second pair returns its input exactly and goes, one pair is left.
// With uint8 zero point 0 the ranges differ (negative values clamp) and the chain stays.
TEST(UnitCoefficient, SameRangeRequantizeLeavesOnePair) {
  const Graph after = check_pass("unit-coefficient", "qdq_int8_to_uint8", qdq_chain(0.05f, DType::kUInt8, 128), {}, 0);
  ASSERT_EQ(after.order().size(), 2u);
  EXPECT_EQ(after.node(after.order()[0]).op, "QuantizeLinear");
  EXPECT_EQ(after.node(after.order()[1]).op, "DequantizeLinear");
  EXPECT_EQ(import_onnx_bytes(export_onnx_bytes(after)).order().size(), 2u);
  EXPECT_EQ(check_pass("unit-coefficient", "qdq_int8_to_uint8_other_range", qdq_chain(0.05f, DType::kUInt8, 0), {}, 0)
                .order()
                .size(),
            4u);
}

// Why Q(s1) → DQ(s1) → Q(s2) → DQ(s2) with s1 ≠ s2 is not shortened to Q(s2) → DQ(s2): the
// values are rounded twice (and clamp to s1's range first), so the shorter form computes
// different numbers on real inputs. The chain's middle pair is already the one requantize.
TEST(UnitCoefficient, QdqChainWithOtherParametersHasNoExactShorterForm) {
  const Graph chain = qdq_chain(0.1f);
  Graph single;
  const Shape xs{1, 4, 3, 3};
  const ValueId x = single.add_input({.name = "x", .shape = xs, .roles = kNCHW});
  Tensor s(DType::kFloat32, {});
  s.data<float>()[0] = 0.1f;
  const ValueId q = add_act(single, "q", xs, DType::kInt8), y = add_act(single, "y", xs);
  const ValueId sv = single.add_constant("s", s), z = single.add_constant("z", Tensor(DType::kInt8, {}));
  single.add_node({.name = "q", .op = "QuantizeLinear", .inputs = {x, sv, z}, .outputs = {q}});
  single.add_node({.name = "dq", .op = "DequantizeLinear", .inputs = {q, sv, z}, .outputs = {y}});
  single.mark_output(y);
  const Verification v = verify_rewrite(chain, single, {.seed = 7, .rtol = 1e-6});
  EXPECT_FALSE(v.ok) << v.describe();
  EXPECT_GT(v.max_abs, 0.05);  // a whole step of the coarser grid
  Graph rewritten = chain;
  EXPECT_EQ(run_pass(find_pass("unit-coefficient"), rewritten).nodes_rewritten, 0);
}

TEST(DeadCode, UnusedBranch) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {2, 3}});
  const ValueId a = add_act(g, "a", {2, 3}), b = add_act(g, "b", {2, 3});
  g.add_node({.name = "unused", .op = "Relu", .inputs = {x}, .outputs = {a}});
  g.add_node({.name = "used", .op = "Neg", .inputs = {x}, .outputs = {b}});
  g.mark_output(b);
  check_pass("dead-code", "unused_branch", g);
}

TEST(DuplicateConstants, EqualConstantsShared) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {2, 3}});
  const ValueId c1 = g.add_constant("c1", pattern(DType::kFloat32, {2, 3}, 1));
  const ValueId c2 = g.add_constant("c2", pattern(DType::kFloat32, {2, 3}, 1));
  const ValueId a = add_act(g, "a", {2, 3}), b = add_act(g, "b", {2, 3});
  g.add_node({.name = "add", .op = "Add", .inputs = {x, c1}, .outputs = {a}});
  g.add_node({.name = "mul", .op = "Mul", .inputs = {a, c2}, .outputs = {b}});
  g.mark_output(b);
  const Graph after = check_pass("duplicate-constants", "shared", g);
  EXPECT_EQ(reachable_constant_bytes(after), 6 * 4);
}

TEST(Pipeline, DumpMarksUnchangedPasses) {
  Graph g = teaching::expanded_mul_add_model();
  std::string dump;
  run_pipeline(g, default_pipeline(), {}, [&](const std::string& text) { dump += text; });
  EXPECT_NE(dump.find("// after fuse-affine\n"), std::string::npos);
  EXPECT_NE(dump.find("// after fold-batchnorm (unchanged)\n"), std::string::npos);
}

TEST(PassTable, UnknownPassNamesTheKnownOnes) {
  EXPECT_THROW(parse_pipeline("fuse-affine,nope"), Error);
  EXPECT_EQ(default_pipeline().size(), pass_table().size());
}

}  // namespace
}  // namespace memledger

namespace memledger {
namespace {

using namespace memledger::testing;

// An exporter's graph: Identity over an initializer, a weight transposed and cast by
// nodes, and a bias expanded to the activation's full shape by ConstantOfShape/Expand.
Graph constant_subgraphs() {
  Graph g;
  const Shape xs{1, 8, 6};
  const ValueId x = g.add_input({.name = "x", .shape = xs});
  const ValueId w = g.add_constant("w", pattern(DType::kFloat32, {6, 6}, 3));
  const ValueId wi = add_act(g, "w_identity", {6, 6});
  g.add_node({.name = "identity", .op = "Identity", .inputs = {w}, .outputs = {wi}});
  const ValueId wt = add_act(g, "w_t", {6, 6});
  g.add_node({.name = "transpose",
              .op = "Transpose",
              .inputs = {wi},
              .outputs = {wt},
              .attributes = {{"perm", std::vector<int64_t>{1, 0}}}});
  const ValueId mm = add_act(g, "mm", xs);
  g.add_node({.name = "matmul", .op = "MatMul", .inputs = {x, wt}, .outputs = {mm}});
  // A bias [6] expanded to [1,8,6]: growing, so it stays an Expand at run time.
  const ValueId b = g.add_constant("b", pattern(DType::kFloat32, {6}, 5));
  const ValueId full = add_act(g, "b_full", xs);
  g.add_node({.name = "expand", .op = "Expand", .inputs = {b, add_int64(g, "shape", xs)}, .outputs = {full}});
  // A ConstantOfShape to [1,8,6]: growing too.
  Tensor one(DType::kFloat32, {1});
  one.data<float>()[0] = 1.0f;
  const ValueId ones = add_act(g, "ones", xs);
  g.add_node({.name = "ones",
              .op = "ConstantOfShape",
              .inputs = {add_int64(g, "ones_shape", xs)},
              .outputs = {ones},
              .attributes = {{"value", one}}});
  const ValueId s = add_act(g, "s", xs), y = add_act(g, "y", xs);
  g.add_node({.name = "add", .op = "Add", .inputs = {mm, full}, .outputs = {s}});
  g.add_node({.name = "mul", .op = "Mul", .inputs = {s, ones}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

TEST(FoldConstants, FoldsWhatDoesNotGrowAndKeepsBroadcasts) {
  const Graph before = constant_subgraphs();
  const Graph after =
      check_pass("fold-constants", "identity_transpose_expand", before, {.evaluate = evaluate_constant_node});
  std::vector<std::string> ops;
  for (NodeId id : after.order()) ops.push_back(after.node(id).op);
  // Identity and Transpose folded; Expand and ConstantOfShape kept (their results are
  // bigger than their constant inputs); the real work stays.
  EXPECT_EQ(ops, (std::vector<std::string>{"MatMul", "Expand", "ConstantOfShape", "Add", "Mul"}));
  EXPECT_LE(reachable_constant_bytes(after), reachable_constant_bytes(before));
}

TEST(FoldConstants, IdentityFoldsAlone) {
  Graph g = constant_subgraphs();
  EXPECT_EQ(fold_identity_constants(g).nodes_rewritten, 1);
  for (NodeId id : g.order()) EXPECT_NE(g.node(id).op, "Identity");
  EXPECT_TRUE(verify_rewrite(constant_subgraphs(), g).ok);
}

}  // namespace
}  // namespace memledger
