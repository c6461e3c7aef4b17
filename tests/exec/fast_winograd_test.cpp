// The fast set's choice of Winograd (exec/fast/kernels_conv.cpp): a dense 3×3 Conv with
// stride 1 over at least 27×27 outputs and constant weights of at most 1 MiB runs oneDNN's
// Winograd kernel, with prepacked weights or not (`run --arena` compares the two bit for
// bit); a smaller one the direct kernel; either way the numbers are the
// reference's within float rounding, and a run inside the fast plan (the Winograd tiles and reorders in the declared
// workspace) is clean and bit-identical. oneDNN 2.6 has Winograd for AVX-512 only: below it
// (an AVX2 machine, or ONEDNN_MAX_CPU_ISA=AVX2) the same Conv runs the direct kernel, with the
// same guarantees.
#include <gtest/gtest.h>

#include <cstring>

#include "exec/fast/isa.h"
#include "exec/fast/prepared_node.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using testing::kNCHW;
using testing::ramp;

// x [1, 16, side, side] → Conv 3×3 (pads 1, 16 → 32) → Relu → y.
Graph conv_network(int64_t side) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 16, side, side}, .roles = kNCHW});
  const ValueId w = g.add_constant("w", ramp({32, 16, 3, 3}, -0.35f, 0.0113f, 61));
  const ValueId b = g.add_constant("b", ramp({32}, -0.2f, 0.013f, 32));
  const ValueId c = g.add_value({.name = "c", .shape = {1, 32, side, side}, .roles = kNCHW});
  const ValueId y = g.add_value({.name = "y", .shape = {1, 32, side, side}, .roles = kNCHW});
  g.add_node({.name = "conv",
              .op = "Conv",
              .inputs = {x, w, b},
              .outputs = {c},
              .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  g.add_node({.name = "relu", .op = "Relu", .inputs = {c}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

std::string implementation(const Graph& g, bool prepack = true) {
  std::string why;
  const auto node = exec::fast::prepare(g, g.node(g.order().at(0)), {.threads = 1, .prepack_weights = prepack}, why);
  EXPECT_NE(node, nullptr) << why;
  return node ? node->describe() : why;
}

void expect_reference_numbers_and_clean_arena(const Graph& g, int64_t side) {
  const std::vector<Tensor> inputs{ramp({1, 16, side, side}, -1.5f, 0.0171f, 173)};
  const Tensor expected = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  const Tensor got = run_graph(g, inputs, {.kernels = KernelSet::kFast}).at(0);
  ASSERT_EQ(got.elements(), expected.elements());
  float largest = 0;
  for (int64_t i = 0; i < expected.elements(); ++i) largest = std::max(largest, std::abs(expected.data<float>()[i]));
  ASSERT_GT(largest, 1.0f);
  for (int64_t i = 0; i < got.elements(); ++i)
    ASSERT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-5f * largest) << i;

  const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1};
  const MemoryPlan plan = plan_for_kernels(g, builtin_profile("host"), exec);
  const ArenaRunReport r = run_in_arena(g, plan, inputs, exec);
  EXPECT_TRUE(r.clean()) << (r.differing_outputs.empty() ? r.failure : r.differing_outputs[0]);
  EXPECT_TRUE(r.untouched_workspaces.empty());
}

TEST(FastWinograd, LargeDense3x3ConvRunsWinogradOnAvx512) {
  const Graph g = conv_network(28);
  const bool wino = exec::fast::effective_isa() == exec::fast::Isa::kAvx512;
  EXPECT_EQ(implementation(g).find("wino") != std::string::npos, wino) << implementation(g);
  if (!wino) {
    EXPECT_NE(implementation(g).find("conv jit"), std::string::npos) << implementation(g);
  }
  expect_reference_numbers_and_clean_arena(g, 28);
  // Without prepacking the same kernel (the weights transformed into the workspace), so a
  // run without prepacking and one with it agree bit for bit.
  EXPECT_EQ(implementation(g, false).find("wino") != std::string::npos, wino) << implementation(g, false);
  const std::vector<Tensor> inputs{ramp({1, 16, 28, 28}, -1.5f, 0.0171f, 173)};
  const Tensor packed = Executor(g, {.kernels = KernelSet::kFast, .prepack_weights = true}).run(inputs).at(0);
  const Tensor per_run = Executor(g, {.kernels = KernelSet::kFast, .prepack_weights = false}).run(inputs).at(0);
  ASSERT_EQ(packed.bytes().size(), per_run.bytes().size());
  EXPECT_EQ(std::memcmp(packed.bytes().data(), per_run.bytes().data(), packed.bytes().size()), 0);
}

TEST(FastWinograd, SmallConvKeepsTheDirectKernel) {
  const Graph g = conv_network(13);
  EXPECT_EQ(implementation(g).find("wino"), std::string::npos) << implementation(g);
  expect_reference_numbers_and_clean_arena(g, 13);
}

}  // namespace
}  // namespace memledger
