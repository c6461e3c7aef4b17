// The fast set's fusions (PrepareOptions::fuse): a Relu, Clip, Sigmoid or SiLU after a Conv runs as
// the Conv's post-op and its node forwards the values; a SiLU elsewhere runs as one swish.
// The numbers are the reference's, an activation whose Conv output has another reader is
// not fused, a heap run hands the forwarding node the Conv's buffer (and an elementwise
// node the buffer of an input nothing reads afterwards), and a run inside the
// fast plan is clean and bit-identical. An erf GELU as exporters write it runs as one GELU in
// its inner Mul.
#include <gtest/gtest.h>

#include <cmath>

#include "memledger/exec/arena_run.h"
#include "memledger/exec/buffer_provider.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using testing::kNCHW;
using testing::ramp;

// x → Conv → SiLU (Sigmoid, Mul) → Conv → Clip(0, 6) → Conv → c3; c3 → Relu → r3 and
// c3 → Add(r3, c3) → y: the last Relu shares its Conv's output with the Add, so it must
// not be fused (the Add reads the Conv's own values).
Graph fusion_network() {
  Graph g;
  auto value = [&](const char* name, Shape shape) {
    return g.add_value({.name = name, .shape = shape, .roles = kNCHW});
  };
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 4, 8, 8}, .roles = kNCHW});
  auto conv = [&](const char* name, ValueId in, int64_t cin, int64_t cout, float start) {
    const ValueId w = g.add_constant(std::string(name) + ".w", ramp({cout, cin, 3, 3}, start, 0.011f, 37));
    const ValueId b = g.add_constant(std::string(name) + ".b", ramp({cout}, -0.2f, 0.05f, 9));
    const ValueId out = value(name, {1, cout, 8, 8});
    g.add_node({.name = name,
                .op = "Conv",
                .inputs = {in, w, b},
                .outputs = {out},
                .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
    return out;
  };
  const ValueId c1 = conv("c1", x, 4, 8, -0.2f);
  const ValueId s1 = value("s1", {1, 8, 8, 8});
  g.add_node({.name = "sigmoid", .op = "Sigmoid", .inputs = {c1}, .outputs = {s1}});
  const ValueId m1 = value("m1", {1, 8, 8, 8});
  g.add_node({.name = "silu", .op = "Mul", .inputs = {c1, s1}, .outputs = {m1}});
  const ValueId c2 = conv("c2", m1, 8, 8, -0.25f);
  const ValueId lo = g.add_constant("lo", ramp({}, 0.0f, 0.0f, 1));
  const ValueId hi = g.add_constant("hi", ramp({}, 0.5f, 0.0f, 1));
  const ValueId r2 = value("r2", {1, 8, 8, 8});
  g.add_node({.name = "clip", .op = "Clip", .inputs = {c2, lo, hi}, .outputs = {r2}});
  const ValueId c3 = conv("c3", r2, 8, 8, -0.3f);
  const ValueId r3 = value("r3", {1, 8, 8, 8});
  g.add_node({.name = "relu", .op = "Relu", .inputs = {c3}, .outputs = {r3}});
  const ValueId y = value("y", {1, 8, 8, 8});
  g.add_node({.name = "add", .op = "Add", .inputs = {r3, c3}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

// Counts the buffers the run moved from a Conv's output to the node forwarding it.
class CountingHeap : public HeapBufferProvider {
 public:
  bool move_buffer(ValueId from, ValueId to) override {
    ++moves;
    return HeapBufferProvider::move_buffer(from, to);
  }
  int moves = 0;
};

TEST(FastFusion, FusedActivationsComputeTheReferenceNumbers) {
  const Graph g = fusion_network();
  const std::vector<Tensor> inputs{ramp({1, 4, 8, 8}, -1.0f, 0.021f, 113)};
  const Tensor expected = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  Executor fast(g, {.kernels = KernelSet::kFast});
  EXPECT_EQ(fast.fast_node_count(), 8) << fast.summary();
  CountingHeap heap;
  const Tensor got = fast.run(inputs, &heap).at(0);
  ASSERT_EQ(got.elements(), expected.elements());
  for (int64_t i = 0; i < got.elements(); ++i) EXPECT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-5f) << i;
  EXPECT_EQ(heap.moves, 2);  // the SiLU's Mul and the Clip; not the Relu whose Conv output the Add reads too
  EXPECT_EQ(heap.live_bytes(), 0);

  const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1};
  const MemoryPlan plan = plan_for_kernels(g, builtin_profile("host"), exec);
  const ArenaRunReport r = run_in_arena(g, plan, inputs, exec);
  EXPECT_TRUE(r.clean()) << (r.differing_outputs.empty() ? r.failure : r.differing_outputs[0]);
  EXPECT_TRUE(r.untouched_workspaces.empty());
}

// A SiLU that does not follow a Conv (here after an Add) runs as one swish in its Mul.
TEST(FastFusion, SiluAfterAnythingElseIsOneSwish) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 3, 5, 5}, .roles = kNCHW});
  const ValueId b = g.add_constant("b", ramp({1, 3, 1, 1}, -0.5f, 0.4f, 3));
  auto value = [&](const char* name) { return g.add_value({.name = name, .shape = {1, 3, 5, 5}, .roles = kNCHW}); };
  const ValueId a = value("a"), s = value("s"), y = value("y");
  g.add_node({.name = "add", .op = "Add", .inputs = {x, b}, .outputs = {a}});
  g.add_node({.name = "sigmoid", .op = "Sigmoid", .inputs = {a}, .outputs = {s}});
  g.add_node({.name = "silu", .op = "Mul", .inputs = {s, a}, .outputs = {y}});
  g.mark_output(y);
  const std::vector<Tensor> inputs{ramp({1, 3, 5, 5}, -3.0f, 0.09f, 71)};
  const Tensor expected = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  const Tensor got = run_graph(g, inputs, {.kernels = KernelSet::kFast}).at(0);
  for (int64_t i = 0; i < got.elements(); ++i) EXPECT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-6f) << i;
}

// A squeeze-and-excitation block as torchvision's efficientnet exports it: x → global
// average pool → Conv 1×1 → SiLU → Conv 1×1 → Sigmoid → Mul(x, gate). Both Convs run on a
// 1×1 activation as one matrix product with their activation as a post-op (the SiLU's Mul
// and the gate's Sigmoid forward, taking the Convs' buffers on the heap).
TEST(FastFusion, SqueezeExcitationGateIsTwoFusedProducts) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 8, 6, 6}, .roles = kNCHW});
  auto value = [&](const char* name, Shape shape) {
    return g.add_value({.name = name, .shape = shape, .roles = kNCHW});
  };
  const ValueId pooled = value("pooled", {1, 8, 1, 1});
  g.add_node({.name = "pool", .op = "GlobalAveragePool", .inputs = {x}, .outputs = {pooled}});
  auto conv = [&](const char* name, ValueId in, int64_t cin, int64_t cout, float start) {
    const ValueId w = g.add_constant(std::string(name) + ".w", ramp({cout, cin, 1, 1}, start, 0.043f, 23));
    const ValueId b = g.add_constant(std::string(name) + ".b", ramp({cout}, -0.3f, 0.07f, 5));
    const ValueId out = value(name, {1, cout, 1, 1});
    g.add_node({.name = name, .op = "Conv", .inputs = {in, w, b}, .outputs = {out}});
    return out;
  };
  const ValueId c1 = conv("fc1", pooled, 8, 4, -0.4f);
  const ValueId s1 = value("s1", {1, 4, 1, 1}), m1 = value("m1", {1, 4, 1, 1});
  g.add_node({.name = "sigmoid", .op = "Sigmoid", .inputs = {c1}, .outputs = {s1}});
  g.add_node({.name = "silu", .op = "Mul", .inputs = {c1, s1}, .outputs = {m1}});
  const ValueId c2 = conv("fc2", m1, 4, 8, -0.5f);
  const ValueId gate = value("gate", {1, 8, 1, 1}), y = value("y", {1, 8, 6, 6});
  g.add_node({.name = "gate", .op = "Sigmoid", .inputs = {c2}, .outputs = {gate}});
  g.add_node({.name = "scale", .op = "Mul", .inputs = {gate, x}, .outputs = {y}});
  g.mark_output(y);
  const std::vector<Tensor> inputs{ramp({1, 8, 6, 6}, -2.0f, 0.037f, 97)};
  const Tensor expected = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  Executor fast(g, {.kernels = KernelSet::kFast});
  EXPECT_EQ(fast.fast_node_count(), 7) << fast.summary();
  CountingHeap heap;
  const Tensor got = fast.run(inputs, &heap).at(0);
  ASSERT_EQ(got.elements(), expected.elements());
  for (int64_t i = 0; i < got.elements(); ++i) EXPECT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-5f) << i;
  EXPECT_EQ(heap.moves, 2);  // the SiLU's Mul and the gate's Sigmoid

  // Inside the fast plan: no guard violation, every workspace used, bit-identical.
  const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1};
  const MemoryPlan plan = plan_for_kernels(g, builtin_profile("host"), exec);
  const ArenaRunReport r = run_in_arena(g, plan, inputs, exec);
  EXPECT_TRUE(r.clean()) << (r.differing_outputs.empty() ? r.failure : r.differing_outputs[0]);
  EXPECT_TRUE(r.untouched_workspaces.empty());
}

// An elementwise fast kernel runs in place on the heap where the input dies at it: x →
// Conv → c; Relu(c) → r; Add(r, c) → a; Tanh(a) → t; Conv(t) → y. The Relu keeps its own
// buffer (the Add reads c after it), the Add takes r's and the Tanh a's.
TEST(FastFusion, ElementwiseNodesTakeTheBufferOfAnInputThatDies) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 4, 6, 6}, .roles = kNCHW});
  auto value = [&](const char* name) { return g.add_value({.name = name, .shape = {1, 4, 6, 6}, .roles = kNCHW}); };
  auto conv = [&](const char* name, ValueId in, ValueId out, float start) {
    const ValueId w = g.add_constant(std::string(name) + ".w", ramp({4, 4, 3, 3}, start, 0.017f, 31));
    g.add_node({.name = name,
                .op = "Conv",
                .inputs = {in, w},
                .outputs = {out},
                .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  };
  const ValueId c = value("c"), r = value("r"), a = value("a"), t = value("t"), y = value("y");
  conv("c1", x, c, -0.3f);
  g.add_node({.name = "relu", .op = "Relu", .inputs = {c}, .outputs = {r}});
  g.add_node({.name = "add", .op = "Add", .inputs = {r, c}, .outputs = {a}});
  g.add_node({.name = "tanh", .op = "Tanh", .inputs = {a}, .outputs = {t}});
  conv("c2", t, y, -0.2f);
  g.mark_output(y);
  const std::vector<Tensor> inputs{ramp({1, 4, 6, 6}, -1.0f, 0.031f, 67)};
  const Tensor expected = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  Executor fast(g, {.kernels = KernelSet::kFast});
  EXPECT_EQ(fast.fast_node_count(), 5) << fast.summary();
  CountingHeap heap;
  const Tensor got = fast.run(inputs, &heap).at(0);
  for (int64_t i = 0; i < got.elements(); ++i) EXPECT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-5f) << i;
  EXPECT_EQ(heap.moves, 2);
  EXPECT_EQ(heap.live_bytes(), 0);
}

// GELU as torch.onnx writes it (below opset 20): Mul(Mul(x, Add(Erf(Div(x, √2)), 1)), ½), here
// after an Add as in a transformer's MLP; `scaled` writes the Div as Mul(x, 1/√2), as other
// converters do, and swaps operand orders. `x_read_after` gives x one reader more (an Add
// after the GELU) and `add_read_twice` the Add's output.
struct GeluGraph {
  Graph g;
  NodeId div, erf, add, mul, half;
};
GeluGraph gelu_graph(bool scaled, bool add_read_twice = false) {
  GeluGraph n;
  Graph& g = n.g;
  const Shape shape{1, 6, 5, 4};
  auto value = [&](const char* name) { return g.add_value({.name = name, .shape = shape, .roles = kNCHW}); };
  auto scalar = [&](const char* name, double v) { return g.add_constant(name, ramp({}, static_cast<float>(v), 0, 1)); };
  const ValueId in = g.add_input({.name = "in", .dtype = DType::kFloat32, .shape = shape, .roles = kNCHW});
  const ValueId x = value("x"), d = value("d"), e = value("e"), a = value("a"), m = value("m"), y = value("y");
  g.add_node({.name = "bias",
              .op = "Add",
              .inputs = {in, g.add_constant("b", ramp({1, 6, 1, 1}, -0.3f, 0.1f, 6))},
              .outputs = {x}});
  n.div = scaled ? g.add_node({.name = "div", .op = "Mul", .inputs = {scalar("r", std::sqrt(0.5)), x}, .outputs = {d}})
                 : g.add_node({.name = "div", .op = "Div", .inputs = {x, scalar("s", std::sqrt(2.0))}, .outputs = {d}});
  n.erf = g.add_node({.name = "erf", .op = "Erf", .inputs = {d}, .outputs = {e}});
  n.add = g.add_node(
      {.name = "add",
       .op = "Add",
       .inputs = scaled ? std::vector<ValueId>{scalar("one", 1), e} : std::vector<ValueId>{e, scalar("one", 1)},
       .outputs = {a}});
  n.mul = g.add_node({.name = "mul",
                      .op = "Mul",
                      .inputs = scaled ? std::vector<ValueId>{a, x} : std::vector<ValueId>{x, a},
                      .outputs = {m}});
  n.half = g.add_node({.name = "half", .op = "Mul", .inputs = {m, scalar("h", 0.5)}, .outputs = {y}});
  if (add_read_twice) {
    const ValueId z = value("z");
    g.add_node({.name = "again", .op = "Add", .inputs = {y, a}, .outputs = {z}});
    g.mark_output(z);
  } else {
    g.mark_output(y);
  }
  return n;
}

TEST(FastFusion, AnErfGeluIsOneGeluInItsInnerMul) {
  for (bool scaled : {false, true}) {
    SCOPED_TRACE(scaled ? "Mul by 1/sqrt(2)" : "Div by sqrt(2)");
    const GeluGraph n = gelu_graph(scaled);
    const std::vector<Tensor> inputs{ramp({1, 6, 5, 4}, -4.0f, 0.067f, 120)};
    const Tensor expected = run_graph(n.g, inputs, {.kernels = KernelSet::kReference}).at(0);
    const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1};
    Executor fast(n.g, exec);
    EXPECT_EQ(fast.fast_node_count(), 6) << fast.summary();
    EXPECT_NE(fast.fast_kernel_of(n.mul).find("gelu (erf)"), std::string::npos) << fast.fast_kernel_of(n.mul);
    for (NodeId skipped : {n.div, n.erf, n.add})
      EXPECT_NE(fast.fast_kernel_of(skipped).find("nothing (the erf GELU's inner Mul"), std::string::npos);
    EXPECT_NE(fast.fast_kernel_of(n.half).find("inner Mul's output"), std::string::npos);
    const Tensor got = fast.run(inputs).at(0);
    ASSERT_EQ(got.elements(), expected.elements());
    for (int64_t i = 0; i < got.elements(); ++i)
      EXPECT_NEAR(got.data<float>()[i], expected.data<float>()[i], 2e-6f + 2e-6f * std::fabs(expected.data<float>()[i]))
          << i;
    // Inside the fast plan (the skipped nodes' buffers planned, never written): clean.
    const MemoryPlan plan = plan_for_kernels(n.g, builtin_profile("host"), exec);
    const ArenaRunReport r = run_in_arena(n.g, plan, inputs, exec);
    EXPECT_TRUE(r.clean()) << (r.differing_outputs.empty() ? r.failure : r.differing_outputs[0]);
  }
}

// Where a value inside the GELU has another reader, its five nodes compute one by one (the
// Erf as the fast set's loop of the reference's function), with the reference's numbers.
TEST(FastFusion, AnErfGeluWhosePartsAreReadElsewhereIsNotFused) {
  const GeluGraph n = gelu_graph(false, /*add_read_twice=*/true);
  const std::vector<Tensor> inputs{ramp({1, 6, 5, 4}, -4.0f, 0.067f, 120)};
  const Tensor expected = run_graph(n.g, inputs, {.kernels = KernelSet::kReference}).at(0);
  Executor fast(n.g, {.kernels = KernelSet::kFast, .threads = 1});
  EXPECT_EQ(fast.fast_node_count(), 7) << fast.summary();
  EXPECT_EQ(fast.fast_kernel_of(n.mul).find("gelu"), std::string::npos) << fast.fast_kernel_of(n.mul);
  EXPECT_NE(fast.fast_kernel_of(n.erf).find("Erf (memledger"), std::string::npos) << fast.fast_kernel_of(n.erf);
  const Tensor got = fast.run(inputs).at(0);
  for (int64_t i = 0; i < got.elements(); ++i) EXPECT_EQ(got.data<float>()[i], expected.data<float>()[i]) << i;
}

}  // namespace
}  // namespace memledger
