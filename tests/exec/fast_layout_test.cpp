// The fast set's channels-last activations (exec/fast/layout.h): which values it keeps in
// NHWC between its own nodes, that the numbers are the reference's, and that a run inside
// a plan made with the fast contracts is clean and bit-identical with NHWC buffers in it;
// and that the operators the fast set runs are exactly those the op table names a
// FastKernel family for.
#include <gtest/gtest.h>

#include <algorithm>

#include "exec/activation_functions.h"
#include "exec/fast/kernel_common.h"
#include "exec/fast/prepared_node.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/compare.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/ir/op_names.h"
#include "memledger/ir/op_table.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using testing::add_act;
using testing::add_int64;
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

// One node of the record's operator, as its fast family takes it: x [1,4,6,6] (and a second
// input where the family has two operands) → y; the inputs' values for a run.
struct FamilyCase {
  Graph g;
  std::vector<Tensor> inputs;
};
FamilyCase family_case(const OpRecord& r) {
  FamilyCase c;
  Graph& g = c.g;
  const Shape image{1, 4, 6, 6};
  auto input = [&](const std::string& name, Shape shape) {
    c.inputs.push_back(ramp(shape, 0.05f, 0.031f, 29 + static_cast<int>(c.inputs.size())));
    return g.add_input(
        {.name = name, .dtype = DType::kFloat32, .shape = shape, .roles = shape.size() == 4 ? kNCHW : AxisRoles{}});
  };
  Node n{.name = "n", .op = std::string(r.name), .domain = std::string(r.domain)};
  Shape out = image;
  switch (r.fast) {
    case FastKernel::kConv:
    case FastKernel::kConvTranspose:
      n.inputs = {input("x", image), g.add_constant("w", ramp({4, 4, 3, 3}, -0.3f, 0.017f, 31))};
      n.attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
      break;
    case FastKernel::kPool:
      n.inputs = {input("x", image)};
      n.attributes = {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}};
      out = {1, 4, 3, 3};
      break;
    case FastKernel::kGlobalPool:
      n.inputs = {input("x", image)};
      out = {1, 4, 1, 1};
      break;
    case FastKernel::kGemm:
    case FastKernel::kMatMul:
      n.inputs = {input("a", {8, 16}), g.add_constant("b", ramp({16, 8}, -0.2f, 0.013f, 23))};
      out = {8, 8};
      break;
    case FastKernel::kBinary:
      n.inputs = {input("x", image), input("x2", image)};
      break;
    case FastKernel::kBatchNorm:
      n.inputs = {input("x", image), g.add_constant("scale", ramp({4}, 0.5f, 0.1f, 4)),
                  g.add_constant("bias", ramp({4}, -0.1f, 0.05f, 4)), g.add_constant("mean", ramp({4}, 0.2f, 0.1f, 4)),
                  g.add_constant("var", ramp({4}, 0.9f, 0.2f, 4))};
      break;
    case FastKernel::kConcat:
      n.inputs = {input("x", image), input("x2", image)};
      n.attributes = {{"axis", int64_t{1}}};
      out = {1, 8, 6, 6};
      break;
    case FastKernel::kTranspose:
      n.inputs = {input("x", {1, 4, 6, 5})};
      n.attributes = {{"perm", std::vector<int64_t>{0, 1, 3, 2}}};
      out = {1, 4, 5, 6};
      break;
    case FastKernel::kReduceMean:
      n.inputs = {input("x", image)};
      n.attributes = {{"axes", std::vector<int64_t>{2, 3}}};
      out = {1, 4, 1, 1};
      break;
    case FastKernel::kSlice:
      n.inputs = {input("x", image), add_int64(g, "starts", {1}), add_int64(g, "ends", {4}), add_int64(g, "axes", {2})};
      out = {1, 4, 3, 6};
      break;
    case FastKernel::kCopy:  // the reshape-like operators say the output's shape each their own way
      n.inputs = {input("x", image)};
      if (r.is("", "Reshape")) {
        n.inputs.push_back(add_int64(g, "shape", {1, 4, 36}));
        out = {1, 4, 36};
      } else if (r.is("", "Flatten")) {
        out = {1, 144};
      } else if (r.is("", "Squeeze")) {
        n.inputs.push_back(add_int64(g, "axes", {0}));
        out = {4, 6, 6};
      } else if (r.is("", "Unsqueeze")) {
        n.inputs.push_back(add_int64(g, "axes", {0}));
        out = {1, 1, 4, 6, 6};
      }
      break;
    case FastKernel::kActivation:  // Pow: by a constant scalar exponent
      n.inputs = {input("x", image)};
      if (r.is("", "Pow")) n.inputs.push_back(g.add_constant("e", ramp({}, 2.0f, 0.0f, 1)));
      break;
    case FastKernel::kSoftmax:
    case FastKernel::kNone:
    case FastKernel::kTfliteConv:  // int8 only: tests/exec/fast_tflite_test.cpp
    case FastKernel::kQuantize:    // to int8 codes: tests/exec/fast_integer_test.cpp
      n.inputs = {input("x", image)};
      break;
  }
  const ValueId y = add_act(g, "y", out);
  n.outputs = {y};
  g.add_node(std::move(n));
  g.mark_output(y);
  return c;
}

// Every operator whose record names a fast family runs on the fast set and computes the
// reference's numbers; every other operator, and a node
// of another domain that has a fast operator's name, has no fast kernel.
TEST(FastKernels, AreTheOpTablesFastFamilies) {
  int fast_records = 0;
  for (const OpRecord& r : op_table()) {
    const FamilyCase c = family_case(r);
    const Node& node = c.g.node(c.g.order().at(0));
    EXPECT_EQ(exec::fast::has_fast_kernel(c.g, node), r.fast != FastKernel::kNone) << op_name(node);
    if (r.fast == FastKernel::kNone) continue;
    ++fast_records;
    // int8 NHWC only: FastTflite.* runs them; QuantizeLinear makes codes: FastInteger.* does
    if (r.fast == FastKernel::kTfliteConv || r.fast == FastKernel::kQuantize) continue;
    Executor fast(c.g, {.kernels = KernelSet::kFast, .threads = 1});
    EXPECT_EQ(fast.fast_node_count(), 1) << op_name(node) << ": " << fast.summary();
    const Tensor got = fast.run(c.inputs).at(0);
    const Tensor expected = run_graph(c.g, c.inputs, {.kernels = KernelSet::kReference}).at(0);
    EXPECT_EQ(compare_tensors(got, expected, 1e-4, 1e-6).mismatches, 0) << op_name(node);
  }
  EXPECT_GT(fast_records, 0);
  Graph g;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 4, 6, 6}, .roles = kNCHW});
  const ValueId y = add_act(g, "y", {1, 4, 6, 6});
  const NodeId custom = g.add_node({.name = "c", .op = "Relu", .domain = "com.example", .inputs = {x}, .outputs = {y}});
  EXPECT_FALSE(exec::fast::has_fast_kernel(g, g.node(custom)));
}

// The reverse direction: every operator the fast eltwise tables give an algorithm is one the
// op table sends to that family, so no table entry is dead and none stands for a fact the
// op table does not hold.
TEST(FastKernels, TheEltwiseTablesHoldOnlyTheOpTablesFamilies) {
  for (std::string_view op : exec::fast::activation_table_ops()) {
    const OpRecord* r = find_op("", op);
    ASSERT_NE(r, nullptr) << op;
    EXPECT_EQ(r->fast, FastKernel::kActivation) << op;
  }
  for (std::string_view op : exec::fast::binary_table_ops()) {
    const OpRecord* r = find_op("", op);
    ASSERT_NE(r, nullptr) << op;
    EXPECT_EQ(r->fast, FastKernel::kBinary) << op;
  }
  EXPECT_FALSE(exec::fast::activation_table_ops().empty());
  EXPECT_FALSE(exec::fast::binary_table_ops().empty());
  // Every activation the fast set runs has its reference function (Clip, whose bounds may be
  // inputs, and Pow, whose exponent is, have kernels of their own), the one the integer
  // kernels tabulate too.
  const std::vector<std::string_view>& reference = exec::activation_function_ops();
  for (std::string_view name : exec::fast::activation_table_ops()) {
    if (name == op::kClip || name == op::kPow) continue;
    EXPECT_NE(std::find(reference.begin(), reference.end(), name), reference.end()) << name;
  }
}

// Pow takes the fast set only by a constant scalar exponent: by another activation it runs on the
// reference kernels, saying why; by 3 it is oneDNN's pow, within its tolerance.
TEST(FastKernels, PowIsFastOnlyByAConstantScalarExponent) {
  for (bool constant : {true, false}) {
    Graph g;
    const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 4, 6, 6}, .roles = kNCHW});
    const ValueId e = constant ? g.add_constant("e", ramp({}, 3.0f, 0.0f, 1))
                               : g.add_input({.name = "e", .dtype = DType::kFloat32, .shape = {}});
    const ValueId y = add_act(g, "y", {1, 4, 6, 6});
    g.add_node({.name = "pow", .op = "Pow", .inputs = {x, e}, .outputs = {y}});
    g.mark_output(y);
    std::vector<Tensor> inputs{ramp({1, 4, 6, 6}, 0.05f, 0.031f, 29)};
    if (!constant) inputs.push_back(ramp({}, 3.0f, 0.0f, 1));
    Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
    EXPECT_EQ(fast.fast_node_count(), constant ? 1 : 0) << fast.summary();
    const Tensor expected = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
    EXPECT_EQ(compare_tensors(fast.run(inputs).at(0), expected, 1e-5, 1e-5).mismatches, 0);
  }
}

}  // namespace
}  // namespace memledger
