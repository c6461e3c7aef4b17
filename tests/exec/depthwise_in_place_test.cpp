// In-place depthwise Conv (issue 13, item 3): the contract declares a workspace of one output
// plane and lets the output take the input's buffer; the planner takes it where the input has
// no other reader, and the arena run — where input and output really share bytes — gives
// outputs bit-identical to the heap run, with the workspace used. The numbers themselves are
// checked against a direct sum in double, since both runs share the kernel.
#include <gtest/gtest.h>

#include <cmath>

#include "corpus.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/ir/op_table.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

struct DepthwiseCase {
  const char* name;
  Shape x;  // [N, C, spatial...]
  std::vector<int64_t> kernel, strides, dilations, pads;
};

Tensor ramp(Shape shape, float start, float step, int period) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.elements(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % period);
  return t;
}

Shape out_shape(const DepthwiseCase& c) {
  Shape y{c.x[0], c.x[1]};
  const size_t spatial = c.kernel.size();
  for (size_t i = 0; i < spatial; ++i)
    y.push_back((c.x[2 + i] + c.pads[i] + c.pads[spatial + i] - c.dilations[i] * (c.kernel[i] - 1) - 1) / c.strides[i] +
                1);
  return y;
}

// x → Relu → depthwise Conv (+ bias) → Relu → y: the Conv's input is an activation with one
// reader, so the planner may put the Conv's output over it.
Graph depthwise_graph(const DepthwiseCase& c) {
  Graph g;
  const int64_t channels = c.x[1];
  const ValueId x = g.add_input({.name = "x", .shape = c.x});
  const ValueId r = g.add_value({.name = "r", .shape = c.x});
  g.add_node({.name = "relu_in", .op = "Relu", .inputs = {x}, .outputs = {r}});
  Shape w_shape{channels, 1};
  w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
  const ValueId w = g.add_constant("w", ramp(w_shape, -0.3f, 0.07f, 11));
  const ValueId b = g.add_constant("b", ramp({channels}, 0.1f, -0.05f, 5));
  const ValueId d = g.add_value({.name = "d", .shape = out_shape(c)});
  g.add_node({.name = "dw",
              .op = "Conv",
              .inputs = {r, w, b},
              .outputs = {d},
              .attributes = {{"group", channels},
                             {"kernel_shape", c.kernel},
                             {"strides", c.strides},
                             {"dilations", c.dilations},
                             {"pads", c.pads}}});
  const ValueId y = g.add_value({.name = "y", .shape = out_shape(c)});
  g.add_node({.name = "relu_out", .op = "Relu", .inputs = {d}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

// The depthwise Conv of `c` on `x` (already through Relu), summed in double.
std::vector<double> reference(const DepthwiseCase& c, const Tensor& x_relu, const Graph& g) {
  const Tensor& w = *g.value(g.node(g.order()[1]).inputs[1]).constant;
  const Tensor& b = *g.value(g.node(g.order()[1]).inputs[2]).constant;
  const Shape y = out_shape(c);
  // Pad to three spatial axes.
  const size_t s = c.kernel.size();
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1},
          pb[3] = {0, 0, 0};
  for (size_t i = 0; i < s; ++i) {
    const size_t a = 3 - s + i;
    in[a] = c.x[2 + i], out[a] = y[2 + i], k[a] = c.kernel[i], st[a] = c.strides[i], dl[a] = c.dilations[i];
    pb[a] = c.pads[i];
  }
  const int64_t planes = c.x[0] * c.x[1], ip = in[0] * in[1] * in[2], op = out[0] * out[1] * out[2];
  std::vector<double> result(static_cast<size_t>(planes * op));
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t ch = p % c.x[1];
    for (int64_t o0 = 0; o0 < out[0]; ++o0)
      for (int64_t o1 = 0; o1 < out[1]; ++o1)
        for (int64_t o2 = 0; o2 < out[2]; ++o2) {
          double sum = b.data<float>()[ch];
          for (int64_t k0 = 0; k0 < k[0]; ++k0)
            for (int64_t k1 = 0; k1 < k[1]; ++k1)
              for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                const int64_t i0 = o0 * st[0] - pb[0] + k0 * dl[0], i1 = o1 * st[1] - pb[1] + k1 * dl[1],
                              i2 = o2 * st[2] - pb[2] + k2 * dl[2];
                if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                sum += static_cast<double>(x_relu.data<float>()[p * ip + (i0 * in[1] + i1) * in[2] + i2]) *
                       w.data<float>()[(ch * k[0] + k0) * k[1] * k[2] + k1 * k[2] + k2];
              }
          result[static_cast<size_t>(p * op + (o0 * out[1] + o1) * out[2] + o2)] = std::max(sum, 0.0);
        }
  }
  return result;
}

const DepthwiseCase kCases[] = {
    {"3x3 stride 1", {1, 8, 9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"3x3 stride 2", {1, 6, 11, 12}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
    {"5x5 stride 2 asymmetric pads", {1, 5, 13, 10}, {5, 5}, {2, 2}, {1, 1}, {2, 1, 1, 2}},
    {"3x3 dilation 2, batch 2", {2, 4, 10, 10}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}},
    {"1-D k=5", {1, 7, 33}, {5}, {1}, {1}, {2, 2}},
    {"3x3 unpadded (smaller planes)", {1, 3, 8, 8}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
};

TEST(DepthwiseInPlace, ContractDeclaresOnePlaneAndTheInput) {
  for (const DepthwiseCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const Graph g = depthwise_graph(c);
    const NodeId conv = g.order()[1];
    const KernelContract contract = op_contract(g, conv, builtin_profile("host"));
    const Shape y = out_shape(c);
    int64_t plane = 4;
    for (size_t i = 2; i < y.size(); ++i) plane *= y[i];
    EXPECT_EQ(contract.workspace_bytes, (plane + 63) / 64 * 64);  // host: fp32, 64-byte aligned
    EXPECT_EQ(contract.overwritable_inputs, std::vector<int>{0});
  }
}

TEST(DepthwiseInPlace, ArenaRunWithSharedBuffersIsBitIdenticalAndCorrect) {
  for (const DepthwiseCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const Graph g = depthwise_graph(c);
    const MemoryPlan plan = plan_memory(g, builtin_profile("host"));
    // The Conv's output takes the Relu's buffer.
    const LiveBuffer* d = nullptr;
    for (const LiveBuffer& b : plan.liveness.buffers)
      if (b.name == "d") d = &b;
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(d->alias_of.has_value());
    EXPECT_EQ(plan.liveness.buffers[static_cast<size_t>(*d->alias_of)].name, "r");

    const std::vector<Tensor> inputs{ramp(c.x, -1.0f, 0.013f, 173)};
    const std::vector<Tensor> heap = run_graph(g, inputs, {.kernels = KernelSet::kReference});
    const ArenaRunReport r = run_in_arena(g, plan, inputs, heap);
    std::string why = r.failure;
    for (const auto& v : r.violations) why += "\n" + v.message;
    for (const auto& o : r.differing_outputs) why += "\n" + o;
    EXPECT_TRUE(r.clean()) << why;
    EXPECT_TRUE(r.untouched_workspaces.empty());

    Tensor x_relu = inputs[0];
    for (float& v : x_relu.data<float>()) v = std::max(v, 0.0f);
    const std::vector<double> expected = reference(c, x_relu, g);
    ASSERT_EQ(static_cast<size_t>(r.outputs.at(0).elements()), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_NEAR(r.outputs[0].data<float>()[i], expected[i], 1e-5 * (1 + std::fabs(expected[i]))) << "element " << i;
  }
}

TEST(DepthwiseInPlace, NotInPlaceWhenPlanesGrowOrTheInputIsReadLater) {
  // Padding wider than the kernel: output planes larger than input planes.
  const DepthwiseCase grow{"grow", {1, 4, 5, 5}, {3, 3}, {1, 1}, {1, 1}, {2, 2, 2, 2}};
  const Graph g = depthwise_graph(grow);
  EXPECT_TRUE(op_contract(g, g.order()[1], builtin_profile("host")).overwritable_inputs.empty());
  const MemoryPlan plan = plan_memory(g, builtin_profile("host"));
  for (const LiveBuffer& b : plan.liveness.buffers) {
    if (b.name == "d") {
      EXPECT_FALSE(b.alias_of.has_value());
    }
  }
  const std::vector<Tensor> inputs{ramp(grow.x, -1.0f, 0.02f, 31)};
  EXPECT_TRUE(run_in_arena(g, plan, inputs).clean());

  // A bypass: the depthwise input also feeds an Add after it (a residual), so in place is refused.
  Graph bypass = depthwise_graph(kCases[0]);
  const ValueId r = bypass.node(bypass.order()[1]).inputs[0];
  const ValueId y = bypass.outputs()[0];
  const ValueId sum = bypass.add_value({.name = "sum", .shape = kCases[0].x});
  bypass.add_node({.name = "residual", .op = "Add", .inputs = {y, r}, .outputs = {sum}});
  bypass.set_graph_outputs({sum});
  const MemoryPlan bypass_plan = plan_memory(bypass, builtin_profile("host"));
  for (const LiveBuffer& b : bypass_plan.liveness.buffers) {
    if (b.name == "d") {
      EXPECT_FALSE(b.alias_of.has_value());
    }
  }
  EXPECT_TRUE(run_in_arena(bypass, bypass_plan, {ramp(kCases[0].x, -1.0f, 0.02f, 31)}).clean());
}

// torchvision's mobilenet_v2: every depthwise Conv is planned over its input, and the run
// inside that arena is bit-identical with every workspace used.
TEST(DepthwiseInPlace, MobilenetV2DepthwiseConvsRunInPlace) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  const Graph g = import_onnx_file((dir / "mobilenet_v2.onnx").string());
  for (const char* device : {"host", "teaching"}) {
    SCOPED_TRACE(device);
    const MemoryPlan plan = plan_memory(g, with_model_dtypes(builtin_profile(device)));
    int depthwise = 0, in_place = 0;
    for (int step = 0; step < plan.liveness.steps(); ++step) {
      const Node& n = g.node(plan.liveness.schedule[static_cast<size_t>(step)]);
      if (n.op != "Conv" || n.int_attr("group", 1) == 1) continue;
      ++depthwise;
      for (const LiveBuffer& b : plan.liveness.buffers)
        if (b.value == n.outputs[0] && b.alias_of) ++in_place;
    }
    EXPECT_EQ(depthwise, 17);
    EXPECT_EQ(in_place, depthwise);
    const ArenaRunReport r = run_in_arena(g, plan, random_inputs(g, 3));
    EXPECT_TRUE(r.clean()) << r.failure << (r.violations.empty() ? "" : r.violations[0].message)
                           << (r.differing_outputs.empty() ? "" : r.differing_outputs[0]);
    EXPECT_TRUE(r.untouched_workspaces.empty());
  }
}

}  // namespace
}  // namespace memledger
