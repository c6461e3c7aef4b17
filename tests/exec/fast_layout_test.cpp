// The fast set's channels-last activations (exec/fast/layout.h): which values it keeps in
// NHWC between its own nodes, that the numbers are the reference's, and that a run inside
// a plan made with the fast contracts is clean and bit-identical with NHWC buffers in it.
#include <gtest/gtest.h>

#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using testing::kNCHW;
using testing::ramp;

struct Net {
  Graph g;
  ValueId x, c1, r1, dw, sum, pool, pw, gap, flat, y;
};

// x → Conv 3×3 → Relu → depthwise Conv 3×3 → Add(Relu's output) → MaxPool → pointwise Conv
// → GlobalAveragePool → Flatten → y, the pattern of a mobile CNN's block.
Net block_network() {
  Net n;
  Graph& g = n.g;
  auto value = [&](const char* name, Shape shape) {
    const AxisRoles roles = shape.size() == 4 ? kNCHW : AxisRoles{};
    return g.add_value({.name = name, .shape = std::move(shape), .roles = roles});
  };
  n.x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 3, 12, 12}, .roles = kNCHW});
  const ValueId w1 = g.add_constant("w1", ramp({16, 3, 3, 3}, -0.3f, 0.01f, 53));
  const ValueId b1 = g.add_constant("b1", ramp({16}, -0.1f, 0.02f, 16));
  n.c1 = value("c1", {1, 16, 12, 12});
  g.add_node({.name = "conv1",
              .op = "Conv",
              .inputs = {n.x, w1, b1},
              .outputs = {n.c1},
              .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  n.r1 = value("r1", {1, 16, 12, 12});
  g.add_node({.name = "relu", .op = "Relu", .inputs = {n.c1}, .outputs = {n.r1}});
  const ValueId wd = g.add_constant("wd", ramp({16, 1, 3, 3}, -0.2f, 0.03f, 29));
  n.dw = value("dw", {1, 16, 12, 12});
  g.add_node({.name = "depthwise",
              .op = "Conv",
              .inputs = {n.r1, wd},
              .outputs = {n.dw},
              .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", int64_t{16}}}});
  n.sum = value("sum", {1, 16, 12, 12});
  g.add_node({.name = "residual", .op = "Add", .inputs = {n.dw, n.r1}, .outputs = {n.sum}});
  n.pool = value("pool", {1, 16, 6, 6});
  g.add_node({.name = "pool",
              .op = "MaxPool",
              .inputs = {n.sum},
              .outputs = {n.pool},
              .attributes = {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}});
  const ValueId wp = g.add_constant("wp", ramp({24, 16, 1, 1}, -0.25f, 0.02f, 31));
  const ValueId bp = g.add_constant("bp", ramp({24}, 0.05f, -0.01f, 24));
  n.pw = value("pw", {1, 24, 6, 6});
  g.add_node({.name = "pointwise", .op = "Conv", .inputs = {n.pool, wp, bp}, .outputs = {n.pw}});
  n.gap = value("gap", {1, 24, 1, 1});
  g.add_node({.name = "gap", .op = "GlobalAveragePool", .inputs = {n.pw}, .outputs = {n.gap}});
  n.flat = value("flat", {1, 24});
  g.add_node({.name = "flatten", .op = "Flatten", .inputs = {n.gap}, .outputs = {n.flat}});
  n.y = value("y", {1, 24});
  g.add_node({.name = "out", .op = "Relu", .inputs = {n.flat}, .outputs = {n.y}});
  g.mark_output(n.y);
  return n;
}

TEST(FastLayout, ActivationsBetweenFastNodesAreChannelsLast) {
  const Net n = block_network();
  const Executor fast(n.g, {.kernels = KernelSet::kFast});
  EXPECT_EQ(fast.fast_node_count(), 9) << fast.summary();
  for (ValueId v : {n.c1, n.r1, n.dw, n.sum, n.pool, n.pw}) EXPECT_TRUE(fast.channels_last(v)) << n.g.value(v).name;
  // The graph's input and output, and a value of one pixel (the same bytes either way).
  for (ValueId v : {n.x, n.gap, n.flat, n.y}) EXPECT_FALSE(fast.channels_last(v)) << n.g.value(v).name;
  EXPECT_NE(fast.summary().find("6 activations channels-last"), std::string::npos) << fast.summary();
  const Executor reference(n.g, {.kernels = KernelSet::kReference});
  EXPECT_FALSE(reference.channels_last(n.c1));
}

// A value a row-major-only node reads stays row-major, and so does everything tied to it.
TEST(FastLayout, ARowMajorReaderKeepsItsClassRowMajor) {
  Net n = block_network();
  // The residual sum is also a graph output: it and everything tied to it stay row-major
  // (the Add's operands, the Relu's input, the pool's output); the pointwise Conv's output
  // is a class of its own and stays channels-last.
  n.g.mark_output(n.sum);
  const Executor fast(n.g, {.kernels = KernelSet::kFast});
  for (ValueId v : {n.c1, n.r1, n.dw, n.sum, n.pool}) EXPECT_FALSE(fast.channels_last(v)) << n.g.value(v).name;
  EXPECT_TRUE(fast.channels_last(n.pw));
  EXPECT_EQ(fast.fast_node_count(), 9) << fast.summary();
}

TEST(FastLayout, ChannelsLastRunAgreesWithTheReferenceAndIsCleanInItsPlan) {
  const Net n = block_network();
  const std::vector<Tensor> inputs{ramp({1, 3, 12, 12}, -1.0f, 0.013f, 157)};
  const Tensor expected = run_graph(n.g, inputs, {.kernels = KernelSet::kReference}).at(0);
  const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1};
  Executor fast(n.g, exec);
  const Tensor got = fast.run(inputs).at(0);
  ASSERT_EQ(got.elements(), expected.elements());
  for (int64_t i = 0; i < got.elements(); ++i) EXPECT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-5f) << i;
  const MemoryPlan plan = plan_for_kernels(n.g, builtin_profile("host"), exec);
  const ArenaRunReport r = run_in_arena(n.g, plan, inputs, exec);
  EXPECT_TRUE(r.clean()) << (r.differing_outputs.empty() ? r.failure : r.differing_outputs[0]);
  EXPECT_TRUE(r.untouched_workspaces.empty());
}

}  // namespace
}  // namespace memledger
