// The interpreter's contract with its buffer provider: kernels stay correct when their
// output is written over an input they declared overwritable, a declared workspace is
// really used, results do not depend on where buffers sit, and bad inputs are refused
// with the input's or node's name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "memledger/core/error.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/ir/affine.h"
#include "memledger/ir/op_table.h"

namespace memledger {
namespace {

const AxisRoles kNCHW{AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW};

Tensor filled(Shape shape, float start, float step) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.elements(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % 97);
  return t;
}

// Buffers in one big block at a chosen misalignment (`shift` bytes past 64), poisoned with
// NaN; an output takes the buffer of an input its kernel declared overwritable when that
// input has no other reader (the planner's rule). Records workspaces untouched by the kernel.
class TestProvider : public BufferProvider {
 public:
  TestProvider(const Graph& g, int shift, bool in_place) : g_(g), shift_(shift), in_place_(in_place) {}

  std::span<std::byte> value_buffer(ValueId v, int64_t bytes) override {
    const Value& value = g_.value(v);
    if (in_place_ && value.producer.valid()) {
      const Node& node = g_.node(value.producer);
      if (node.outputs.size() == 1) {
        for (int i : op_contract(g_, value.producer, builtin_profile("host")).overwritable_inputs) {
          const ValueId in = node.inputs[i];
          auto it = live_.find(in);
          if (it == live_.end() || g_.consumers(in).size() != 1 || g_.is_graph_output(in)) continue;
          ++aliased;
          live_[v] = it->second;
          refs_[it->second.data()]++;
          return it->second.subspan(0, static_cast<size_t>(bytes));
        }
      }
    }
    return live_[v] = fresh(bytes);
  }
  std::span<std::byte> workspace(NodeId node, int64_t bytes) override { return workspaces_[node] = fresh(bytes); }
  void release(ValueId v) override { live_.erase(v); }
  void release_workspace(NodeId node) override {
    const auto ws = workspaces_.at(node);
    const int64_t floats = static_cast<int64_t>(ws.size()) / 4;
    int64_t touched = 0;
    for (int64_t i = 0; i < floats; ++i) {
      float f;
      std::memcpy(&f, ws.data() + i * 4, 4);
      touched += !std::isnan(f);
    }
    workspace_touched[node.index] = touched;
  }

  int aliased = 0;
  std::map<int, int64_t> workspace_touched;

 private:
  std::span<std::byte> fresh(int64_t bytes) {
    auto& block = blocks_.emplace_back(static_cast<size_t>(bytes + 128));
    auto base = reinterpret_cast<uintptr_t>(block.data());
    std::byte* p = block.data() + (64 - base % 64) % 64 + shift_;
    const float nan = std::nanf("");
    for (int64_t i = 0; i + 4 <= bytes; i += 4) std::memcpy(p + i, &nan, 4);
    refs_[p] = 1;
    return {p, static_cast<size_t>(bytes)};
  }
  const Graph& g_;
  int shift_;
  bool in_place_;
  std::vector<std::vector<std::byte>> blocks_;
  std::map<ValueId, std::span<std::byte>> live_;
  std::map<std::byte*, int> refs_;
  std::map<NodeId, std::span<std::byte>> workspaces_;
};

// x → Affine(historical) → Relu → Conv 3×3 → Add(bias broadcast) → Softmax → y, plus a
// Reshape → Gemm branch: every kernel family once.
Graph small_network(AffineRule rule) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 4, 6, 6}, .roles = kNCHW});
  const ValueId s = g.add_constant("scale", filled({1, 4, 1, 1}, 0.5f, 0.25f), kNCHW);
  const ValueId b = g.add_constant("bias", filled({1, 4, 1, 1}, -0.5f, 0.1f), kNCHW);
  const ValueId a = add_affine(g, x, s, b, rule, "affine");
  auto value = [&](const char* name, Shape shape) { return g.add_value({.name = name, .shape = std::move(shape)}); };
  const ValueId r = value("r", {1, 4, 6, 6});
  g.add_node({.name = "relu", .op = "Relu", .inputs = {a}, .outputs = {r}});
  const ValueId w = g.add_constant("w", filled({8, 4, 3, 3}, -0.2f, 0.01f));
  const ValueId c = value("c", {1, 8, 6, 6});
  g.add_node({.name = "conv",
              .op = "Conv",
              .inputs = {r, w},
              .outputs = {c},
              .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  const ValueId cb = g.add_constant("cb", filled({8, 1, 1}, 0.1f, 0.05f));
  const ValueId d = value("d", {1, 8, 6, 6});
  g.add_node({.name = "add", .op = "Add", .inputs = {c, cb}, .outputs = {d}});
  const ValueId shape = g.add_constant("shape", [] {
    Tensor t(DType::kInt64, {2});
    t.data<int64_t>()[0] = 1;
    t.data<int64_t>()[1] = 288;
    return t;
  }());
  const ValueId flat = value("flat", {1, 288});
  g.add_node({.name = "reshape", .op = "Reshape", .inputs = {d, shape}, .outputs = {flat}});
  const ValueId fw = g.add_constant("fw", filled({10, 288}, -0.1f, 0.002f));
  const ValueId logits = value("logits", {1, 10});
  g.add_node(
      {.name = "fc", .op = "Gemm", .inputs = {flat, fw}, .outputs = {logits}, .attributes = {{"transB", int64_t{1}}}});
  const ValueId y = value("y", {1, 10});
  g.add_node({.name = "softmax", .op = "Softmax", .inputs = {logits}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

std::vector<float> values(const Tensor& t) { return {t.data<float>().begin(), t.data<float>().end()}; }

TEST(Interpreter, ResultsDoNotDependOnPlacementOrInPlaceReuse) {
  const Graph g = small_network(AffineRule::kCurrent);
  const std::vector<Tensor> inputs{filled({1, 4, 6, 6}, -1.0f, 0.03f)};
  for (KernelSet set : {KernelSet::kFast, KernelSet::kReference}) {
    SCOPED_TRACE(kernel_set_name(set));
    const std::vector<float> reference =
        values(run_graph(g, inputs, {.provider = nullptr, .after_node = {}, .kernels = set}).at(0));
    float sum = 0;
    for (float v : reference) sum += v;
    EXPECT_NEAR(sum, 1.0f, 1e-5f);
    for (int shift : {0, 4, 12}) {
      for (bool in_place : {false, true}) {
        TestProvider provider(g, shift, in_place);
        int steps = 0;
        const auto out =
            run_graph(g, inputs, {.provider = &provider, .after_node = [&](NodeId) { ++steps; }, .kernels = set});
        EXPECT_EQ(values(out.at(0)), reference) << "shift " << shift << (in_place ? " in place" : "");
        EXPECT_EQ(steps, 7);
        if (in_place) {
          EXPECT_GE(provider.aliased, 3);  // relu over affine, add over conv, reshape, softmax
        }
      }
    }
  }
}

// The fast set (oneDNN) computes the same numbers as the reference within float rounding.
TEST(Interpreter, FastKernelsAgreeWithTheReference) {
  const Graph g = small_network(AffineRule::kCurrent);
  const std::vector<Tensor> inputs{filled({1, 4, 6, 6}, -1.0f, 0.03f)};
  Executor fast(g, {.kernels = KernelSet::kFast});
  EXPECT_EQ(fast.fast_node_count(), 6) << fast.summary();  // all but the Affine
  EXPECT_EQ(fast.kernel_set_of(NodeId{0}), KernelSet::kReference);
  EXPECT_EQ(fast.kernel_set_of(NodeId{2}), KernelSet::kFast);
  const std::vector<float> a = values(fast.run(inputs).at(0));
  const std::vector<float> b =
      values(run_graph(g, inputs, {.provider = nullptr, .after_node = {}, .kernels = KernelSet::kReference}).at(0));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6f) << i;
}

// The fast Conv's workspace is what oneDNN reports (scratchpad and reorder buffers; without
// prepacking the blocked weights too), the run gets exactly that and writes into it.
TEST(Interpreter, FastConvDeclaresItsOneDnnWorkspaceAndUsesIt) {
  const Graph g = small_network(AffineRule::kCurrent);
  const NodeId conv{2};
  const DeviceProfile host = builtin_profile("host");
  for (bool prepack : {true, false}) {
    SCOPED_TRACE(prepack ? "prepacked weights" : "weights reordered per run");
    const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1, .prepack_weights = prepack};
    const int64_t declared = contract_source(exec)(g, conv, host).workspace_bytes;
    Executor executor(g, exec);
    if (!prepack) {
      EXPECT_GE(declared, 8 * 4 * 3 * 3 * 4);  // at least the weights in oneDNN's format
      EXPECT_EQ(executor.prepacked_bytes(), 0);
    } else {
      EXPECT_GT(executor.prepacked_bytes(), 0) << executor.summary();
    }
    TestProvider provider(g, 4, false);
    executor.run(std::vector<Tensor>{filled({1, 4, 6, 6}, -1.0f, 0.03f)}, &provider);
    if (declared > 0) {
      EXPECT_GT(provider.workspace_touched.at(2), 0);
    } else {
      EXPECT_EQ(provider.workspace_touched.count(2), 0u);  // no workspace asked for
    }
    // A plan made for these kernels places exactly that workspace.
    const MemoryPlan plan = plan_for_kernels(g, host, exec);
    int64_t planned = 0;
    for (const LiveBuffer& b : plan.liveness.buffers)
      if (b.category == BufferCategory::kWorkspace && b.node == conv) planned = b.logical_bytes;
    EXPECT_EQ(planned, declared);
  }
  EXPECT_EQ(op_contract(g, conv, host).workspace_bytes, 4 * 36 * 36);  // the reference's
}

TEST(Interpreter, HistoricalAffineComputesThroughItsWorkspace) {
  const Graph current = small_network(AffineRule::kCurrent);
  const Graph historical = small_network(AffineRule::kHistorical);
  const NodeId affine{0};
  const DeviceProfile host = builtin_profile("host");
  EXPECT_EQ(op_contract(current, affine, host).workspace_bytes, 0);
  EXPECT_EQ(op_contract(historical, affine, host).workspace_bytes, 4 * 144);  // the output's bytes
  EXPECT_TRUE(op_contract(historical, affine, host).overwritable_inputs.empty());
  EXPECT_EQ(op_contract(current, affine, host).overwritable_inputs, std::vector<int>{0});
  const std::vector<Tensor> inputs{filled({1, 4, 6, 6}, -1.0f, 0.03f)};
  TestProvider provider(historical, 0, false);
  const auto out =
      run_graph(historical, inputs, {.provider = &provider, .after_node = {}, .kernels = KernelSet::kReference});
  EXPECT_EQ(provider.workspace_touched.at(0), 144);  // every output element passed through it
  EXPECT_EQ(
      values(out.at(0)),
      values(
          run_graph(current, inputs, {.provider = nullptr, .after_node = {}, .kernels = KernelSet::kReference}).at(0)));
}

TEST(Interpreter, ConvDeclaresItsIm2colWorkspaceAndUsesIt) {
  const Graph g = small_network(AffineRule::kCurrent);
  const NodeId conv{2};
  EXPECT_EQ(op_contract(g, conv, builtin_profile("host")).workspace_bytes, 4 * 36 * 36);  // [C·kh·kw, H·W]
  TestProvider provider(g, 0, false);
  run_graph(g, std::vector<Tensor>{filled({1, 4, 6, 6}, -1.0f, 0.03f)},
            {.provider = &provider, .after_node = {}, .kernels = KernelSet::kReference});
  EXPECT_EQ(provider.workspace_touched.at(2), 36 * 36);
}

TEST(Interpreter, RefusesBadInputsByName) {
  const Graph g = small_network(AffineRule::kCurrent);
  try {
    run_graph(g, std::vector<Tensor>{filled({1, 4, 6, 5}, 0, 1)});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x': expected float32 [1,4,6,6], got float32 [1,4,6,5]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(run_graph(g, std::map<std::string, Tensor>{}), Error);
  std::map<std::string, Tensor> extra{{"x", filled({1, 4, 6, 6}, 0, 1)}, {"z", filled({1}, 0, 1)}};
  EXPECT_THROW(run_graph(g, extra), Error);

  Graph bad = small_network(AffineRule::kCurrent);
  bad.set_op(NodeId{1}, "Frobnicate", bad.node(NodeId{1}).domain);
  try {
    run_graph(bad, std::vector<Tensor>{filled({1, 4, 6, 6}, 0, 1)});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("relu"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Frobnicate"), std::string::npos) << e.what();
  }
}

TEST(Interpreter, RandomInputsAreSeeded) {
  const Graph g = small_network(AffineRule::kCurrent);
  EXPECT_EQ(random_inputs(g, 7).at(0), random_inputs(g, 7).at(0));
  EXPECT_FALSE(random_inputs(g, 7).at(0) == random_inputs(g, 8).at(0));
}

}  // namespace
}  // namespace memledger
