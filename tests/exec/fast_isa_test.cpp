// What the fast set does on the vector ISA oneDNN runs (exec/fast/isa.h): the tests ask
// which one it is and assert what that ISA must give, so they pass on an AVX2-only machine
// and on an AVX-512 one alike, and scripts/test.sh runs them a second time with oneDNN
// capped at AVX2 (ONEDNN_MAX_CPU_ISA=AVX2) so both paths are checked on either machine.
// Gemm and MatMul: oneDNN's brgemm matmul on AVX-512; below it oneDNN has only gemm-based
// matmuls (they pack through malloc, behind the plan's back), so the product runs as its AVX2
// 1×1 convolution. HardSigmoid and the hard-swish pattern are fast on both.
#include <gtest/gtest.h>

#include <cstring>

#include "exec/fast/isa.h"
#include "exec/fast/prepared_node.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/compare.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using exec::fast::effective_isa;
using exec::fast::Isa;
using testing::add_act;
using testing::kNCHW;
using testing::ramp;

std::string implementation(const Graph& g, size_t position, bool prepack = true) {
  std::string why;
  const auto node =
      exec::fast::prepare(g, g.node(g.order().at(position)), {.threads = 1, .prepack_weights = prepack}, why);
  EXPECT_NE(node, nullptr) << why;
  return node ? node->describe() : why;
}

// The fast run agrees with the reference; a run inside the fast plan is clean and
// bit-identical (the arena run compares a heap run without prepacking against an arena run
// with it), every declared workspace touched.
void expect_fast_matches_reference_and_arena(const Graph& g, const std::vector<Tensor>& inputs) {
  const Tensor want = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
  EXPECT_EQ(fast.fast_node_count(), static_cast<int>(g.order().size())) << fast.summary();
  const Tensor got = fast.run(inputs).at(0);
  EXPECT_EQ(compare_tensors(got, want, 1e-5, 1e-6).mismatches, 0);
  const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1};
  const MemoryPlan plan = plan_for_kernels(g, builtin_profile("host"), exec);
  const ArenaRunReport r = run_in_arena(g, plan, inputs, exec);
  EXPECT_TRUE(r.clean()) << (r.differing_outputs.empty() ? r.failure : r.differing_outputs[0]);
  EXPECT_TRUE(r.untouched_workspaces.empty());
}

TEST(FastIsa, OneDnnRunsAtLeastAvx2Here) {
  // The machines memledger's fast set is built for; an older one would run every node on
  // the reference kernels.
  EXPECT_NE(effective_isa(), Isa::kOlder) << "oneDNN runs below AVX2";
  EXPECT_EQ(exec::fast::isa_name(Isa::kAvx2), "avx2");
}

// A classifier's last layer, Gemm(transB) over [1, 300] with 20 outputs and a bias.
TEST(FastIsa, GemmRunsFastOnEitherIsa) {
  Graph g;
  const ValueId a = g.add_input({.name = "a", .dtype = DType::kFloat32, .shape = {1, 300}});
  const ValueId w = g.add_constant("w", ramp({20, 300}, -0.2f, 0.0031f, 97));
  const ValueId b = g.add_constant("b", ramp({20}, -0.1f, 0.01f, 20));
  const ValueId y = add_act(g, "y", {1, 20});
  g.add_node({.name = "fc", .op = "Gemm", .inputs = {a, w, b}, .outputs = {y}, .attributes = {{"transB", int64_t{1}}}});
  g.mark_output(y);
  const std::string impl = implementation(g, 0);
  if (effective_isa() == Isa::kAvx512) {
    EXPECT_EQ(impl.find("matmul brg:avx512"), 0u) << impl;
  } else {
    EXPECT_EQ(impl.find("matmul as conv jit_1x1:avx2"), 0u) << impl;
  }
  expect_fast_matches_reference_and_arena(g, {ramp({1, 300}, -1.0f, 0.013f, 71)});
}

// MatMul over [2, 5, 24] rows with constant [24, 16] weights (a transformer's projection),
// and Gemm with alpha 0.5 and weights not transposed: the conv path takes B's strides and the
// output scale as they are.
TEST(FastIsa, MatMulAndScaledGemmRunFastOnEitherIsa) {
  {
    Graph g;
    const ValueId a = g.add_input({.name = "a", .dtype = DType::kFloat32, .shape = {2, 5, 24}});
    const ValueId w = g.add_constant("w", ramp({24, 16}, -0.3f, 0.007f, 89));
    const ValueId y = add_act(g, "y", {2, 5, 16});
    g.add_node({.name = "mm", .op = "MatMul", .inputs = {a, w}, .outputs = {y}});
    g.mark_output(y);
    const std::string impl = implementation(g, 0);
    EXPECT_NE(impl.find(effective_isa() == Isa::kAvx512 ? "matmul brg" : "matmul as conv"), std::string::npos) << impl;
    expect_fast_matches_reference_and_arena(g, {ramp({2, 5, 24}, -1.0f, 0.017f, 53)});
  }
  {
    Graph g;
    const ValueId a = g.add_input({.name = "a", .dtype = DType::kFloat32, .shape = {3, 40}});
    const ValueId w = g.add_constant("w", ramp({40, 12}, -0.25f, 0.009f, 61));
    const ValueId y = add_act(g, "y", {3, 12});
    g.add_node({.name = "fc", .op = "Gemm", .inputs = {a, w}, .outputs = {y}, .attributes = {{"alpha", 0.5f}}});
    g.mark_output(y);
    expect_fast_matches_reference_and_arena(g, {ramp({3, 40}, -1.0f, 0.019f, 37)});
  }
}

// Weights over 16 MiB are not reordered into a workspace on every run below AVX-512: there
// the Gemm stays on the reference kernel (and the reason names the size).
TEST(FastIsa, HugeGemmWeightsStayOnTheReferenceBelowAvx512) {
  Graph g;
  const ValueId a = g.add_input({.name = "a", .dtype = DType::kFloat32, .shape = {1, 2048}});
  const ValueId w = g.add_constant("w", ramp({2048, 2049}, -0.2f, 0.0001f, 97));
  const ValueId y = add_act(g, "y", {1, 2049});
  g.add_node({.name = "fc", .op = "Gemm", .inputs = {a, w}, .outputs = {y}});
  g.mark_output(y);
  std::string why;
  const auto node = exec::fast::prepare(g, g.node(g.order().at(0)), {.threads = 1, .contract_only = true}, why);
  if (effective_isa() == Isa::kAvx512) {
    EXPECT_NE(node, nullptr) << why;
  } else {
    EXPECT_EQ(node, nullptr);
    EXPECT_NE(why.find("over the 16777216 B"), std::string::npos) << why;
  }
}

// x → Conv → HardSigmoid, Mul (hard-swish as torch.onnx writes it below opset 14) → Conv 1×1
// → HardSigmoid (a squeeze-and-excitation gate, alpha 0.2) → y: every node fast on either
// ISA, the hard-swish the first Conv's post-op, the gate the second's.
TEST(FastIsa, HardSigmoidAndHardSwishAreFastAndFused) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 4, 6, 6}, .roles = kNCHW});
  auto value = [&](const char* name, int64_t channels) {
    return g.add_value({.name = name, .shape = {1, channels, 6, 6}, .roles = kNCHW});
  };
  const ValueId c1 = value("c1", 8), h = value("h", 8), m = value("m", 8), c2 = value("c2", 4), y = value("y", 4);
  g.add_node({.name = "conv1",
              .op = "Conv",
              .inputs = {x, g.add_constant("w1", ramp({8, 4, 3, 3}, -0.3f, 0.013f, 29))},
              .outputs = {c1},
              .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  g.add_node({.name = "hsig",
              .op = "HardSigmoid",
              .inputs = {c1},
              .outputs = {h},
              .attributes = {{"alpha", 1.0f / 6}, {"beta", 0.5f}}});
  g.add_node({.name = "hswish", .op = "Mul", .inputs = {c1, h}, .outputs = {m}});
  g.add_node({.name = "conv2",
              .op = "Conv",
              .inputs = {m, g.add_constant("w2", ramp({4, 8, 1, 1}, -0.2f, 0.02f, 17))},
              .outputs = {c2}});
  g.add_node({.name = "gate", .op = "HardSigmoid", .inputs = {c2}, .outputs = {y}});
  g.mark_output(y);
  const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
  EXPECT_EQ(fast.fast_node_count(), 5) << fast.summary();
  for (size_t i = 0; i < g.order().size(); ++i) {
    const Node& n = g.node(g.order()[i]);
    std::string why;
    const auto node = exec::fast::prepare(g, n, {.threads = 1}, why);
    ASSERT_NE(node, nullptr) << n.name << ": " << why;
    if (n.op == "Conv") {
      EXPECT_TRUE(node->fused()) << n.name << ": " << node->describe();
    }
    if (n.name == "hswish" || n.name == "gate") {
      EXPECT_TRUE(node->relies_on_fusion()) << n.name;
    }
  }
  const std::vector<Tensor> inputs{ramp({1, 4, 6, 6}, -3.0f, 0.047f, 131)};
  expect_fast_matches_reference_and_arena(g, inputs);
  // Unfused (PrepareOptions::fuse off the Conv's path: a HardSigmoid alone, two eltwise steps).
  Graph alone;
  const ValueId ax = alone.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 4, 6, 6}, .roles = kNCHW});
  const ValueId ay = add_act(alone, "y", {1, 4, 6, 6});
  alone.add_node({.name = "hsig", .op = "HardSigmoid", .inputs = {ax}, .outputs = {ay}});
  alone.mark_output(ay);
  const std::string impl = implementation(alone, 0);
  EXPECT_NE(impl.find("eltwise jit"), std::string::npos) << impl;
  EXPECT_NE(impl.find(effective_isa() == Isa::kAvx512 ? "avx512" : "avx2"), std::string::npos) << impl;
  expect_fast_matches_reference_and_arena(alone, inputs);
}

}  // namespace
}  // namespace memledger
