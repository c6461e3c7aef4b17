// Running inside the plan: the teaching model, its variants and every corpus model give
// bit-identical outputs inside their planned arenas, and the runner catches what it is for:
// a buffer planned too small, two live buffers planned over each other, a write past a
// buffer's end or into the guards, a declared workspace never touched.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "corpus.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/onnx/import.h"
#include "memledger/teaching/variants.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

std::string describe(const ArenaRunReport& r) {
  std::string s = r.failure;
  for (const auto& v : r.violations) s += "\n" + v.message;
  for (const auto& d : r.differing_outputs) s += "\n" + d;
  return s;
}

int count(const ArenaRunReport& r, ArenaViolation::Kind kind) {
  int n = 0;
  for (const auto& v : r.violations) n += v.kind == kind ? 1 : 0;
  return n;
}

ArenaRunReport arena_run(const Graph& g, const DeviceProfile& profile, const PlanOptions& options = {},
                         const PlacementOptions& placement = {}) {
  const MemoryPlan plan = plan_memory(g, with_model_dtypes(profile), options, placement);
  return run_in_arena(g, plan, random_inputs(g, 7));
}

TEST(ArenaRun, TeachingModelIsBitIdenticalOnEveryDevice) {
  const Graph g = import_onnx_file(MEMLEDGER_SOURCE_DIR "/tests/data/onnx/affine_distinct.onnx");
  for (const char* device : {"host", "teaching"}) {
    SCOPED_TRACE(device);
    const ArenaRunReport r = arena_run(g, resolve_device(device));
    EXPECT_TRUE(r.clean()) << describe(r);
    EXPECT_TRUE(r.untouched_workspaces.empty());
    EXPECT_GT(r.arena_bytes, 0);
    EXPECT_EQ(r.outputs.size(), 1u);
  }
}

TEST(ArenaRun, TeachingVariantsAndTestModelsAreBitIdentical) {
  for (const teaching::Variant& v : teaching::affine_variants()) {
    SCOPED_TRACE(std::string(1, v.letter));
    for (const char* device : {"host", "teaching"}) {
      const ArenaRunReport r = arena_run(v.graph, resolve_device(device), v.options);
      EXPECT_TRUE(r.clean()) << device << describe(r);
      // A's historical kernel really uses its workspace; no other variant has one.
      EXPECT_TRUE(r.untouched_workspaces.empty()) << device;
    }
    // Every placement algorithm's plan runs, not only the default one.
    for (auto algorithm : {allocate::Algorithm::kNaive, allocate::Algorithm::kGreedy}) {
      const ArenaRunReport r = arena_run(v.graph, resolve_device("host"), v.options, {.algorithm = algorithm});
      EXPECT_TRUE(r.clean()) << describe(r);
    }
  }
  const Graph expanded = teaching::expanded_mul_add_model();
  for (bool in_place : {true, false}) {
    const ArenaRunReport r = arena_run(expanded, resolve_device("host"), {.in_place = in_place});
    EXPECT_TRUE(r.clean()) << describe(r);
  }
  for (const char* model :
       {"conv_bn_relu", "affine_c_eq_h", "affine_c_eq_w", "nhwc_input", "affine_vector_w", "quantized_per_axis"}) {
    SCOPED_TRACE(model);
    const Graph g = import_onnx_file(std::string(MEMLEDGER_SOURCE_DIR "/tests/data/onnx/") + model + ".onnx");
    const ArenaRunReport r = arena_run(g, resolve_device("host"));
    EXPECT_TRUE(r.clean()) << describe(r);
  }
}

// The buffer the plan gives to the first activation, or -1.
int first_activation(const MemoryPlan& plan) {
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i)
    if (plan.liveness.buffers[i].category == BufferCategory::kActivation && !plan.liveness.buffers[i].alias_of)
      return static_cast<int>(i);
  return -1;
}

TEST(ArenaRun, BufferPlannedTooSmallIsAGuardViolation) {
  const Graph g = teaching::expanded_mul_add_model();  // x → Mul → t → Add → y
  MemoryPlan plan = plan_memory(g, builtin_profile("host"), {.in_place = false});
  const int t = first_activation(plan);
  ASSERT_GE(t, 0);
  plan.liveness.buffers[static_cast<size_t>(t)].physical_bytes -= 100;
  const ArenaRunReport r = run_in_arena(g, plan, random_inputs(g, 1));
  EXPECT_FALSE(r.clean());
  EXPECT_EQ(count(r, ArenaViolation::Kind::kShortBuffer), 1) << describe(r);
  ASSERT_GE(count(r, ArenaViolation::Kind::kWriteOutside), 1) << describe(r);
  const std::string name = plan.liveness.buffers[static_cast<size_t>(t)].name;
  bool named = false;
  for (const auto& v : r.violations)
    if (v.kind == ArenaViolation::Kind::kWriteOutside) {
      EXPECT_NE(v.node, "");
      named |= v.message.find("past the end of its output '" + name + "'") != std::string::npos;
    }
  EXPECT_TRUE(named) << describe(r);
}

TEST(ArenaRun, WorkspacePlannedTooSmallIsAGuardViolation) {
  for (teaching::Variant& v : teaching::affine_variants()) {
    if (v.letter != 'A') continue;  // the historical kernel: a workspace the size of its output
    MemoryPlan plan = plan_memory(v.graph, builtin_profile("host"), v.options);
    bool shrunk = false;
    for (LiveBuffer& b : plan.liveness.buffers)
      if (b.category == BufferCategory::kWorkspace) {
        b.physical_bytes -= 64;
        shrunk = true;
      }
    ASSERT_TRUE(shrunk);
    const ArenaRunReport r = run_in_arena(v.graph, plan, random_inputs(v.graph, 2));
    EXPECT_FALSE(r.clean());
    ASSERT_GE(count(r, ArenaViolation::Kind::kWriteOutside), 1) << describe(r);
    EXPECT_NE(describe(r).find("0 B past the end of its workspace"), std::string::npos) << describe(r);
  }
}

TEST(ArenaRun, TwoLiveBuffersPlannedOverEachOtherAreCaught) {
  const Graph g = teaching::expanded_mul_add_model();
  MemoryPlan plan = plan_memory(g, builtin_profile("host"), {.in_place = false});
  // Put the Mul's output over the graph input it reads: both live at step 0.
  const int t = first_activation(plan);
  ASSERT_GE(t, 0);
  int x = -1;
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i)
    if (plan.liveness.buffers[i].category == BufferCategory::kInput) x = static_cast<int>(i);
  ASSERT_GE(x, 0);
  plan.offsets[static_cast<size_t>(t)] = plan.offsets[static_cast<size_t>(x)];
  const ArenaRunReport r = run_in_arena(g, plan, random_inputs(g, 1));
  EXPECT_FALSE(r.clean());
  ASSERT_GE(count(r, ArenaViolation::Kind::kOverlapsLive), 1) << describe(r);
  bool named = false;
  for (const auto& v : r.violations)
    named |= v.kind == ArenaViolation::Kind::kOverlapsLive &&
             v.message.find("'" + plan.liveness.buffers[static_cast<size_t>(x)].name + "'") != std::string::npos;
  EXPECT_TRUE(named) << describe(r);
  // Poisoning the new output over the live input changes the numbers as well.
  EXPECT_FALSE(r.differing_outputs.empty()) << describe(r);
}

// The provider driven by hand, as the interpreter would: inputs, then each node's
// outputs and workspace, the node's writes, after_node, releases.
class HandRun {
 public:
  explicit HandRun(char letter) {
    for (teaching::Variant& v : teaching::affine_variants())
      if (v.letter == letter) {
        graph = std::move(v.graph);
        plan = plan_memory(graph, builtin_profile("host"), v.options);
        arena = std::make_unique<ArenaBufferProvider>(graph, plan);
        return;
      }
    ADD_FAILURE() << "no variant " << letter;
  }
  HandRun(const HandRun&) = delete;  // the provider refers to graph and plan

  std::span<std::byte> buffer(ValueId v) {
    const Value& value = graph.value(v);
    return arena->value_buffer(v, element_count(value.shape) * host_element_bytes(value.dtype));
  }

  Graph graph;
  MemoryPlan plan;
  std::unique_ptr<ArenaBufferProvider> arena;
};

TEST(ArenaProvider, WorkspaceNeverTouchedIsReported) {
  HandRun run('A');  // one node: the historical affine with a workspace
  ASSERT_EQ(run.graph.order().size(), 1u);
  const NodeId node = run.graph.order()[0];
  run.buffer(run.graph.inputs()[0]);
  auto y = run.buffer(run.graph.outputs()[0]);
  const auto contract = run.plan.liveness.contracts[0];
  ASSERT_GT(contract.workspace_bytes, 0);
  run.arena->workspace(node, contract.workspace_bytes);
  std::memset(y.data(), 0, y.size());  // the output written, the workspace not
  run.arena->after_node(node);
  EXPECT_TRUE(run.arena->violations().empty());
  ASSERT_EQ(run.arena->untouched_workspaces().size(), 1u);
  EXPECT_NE(run.arena->untouched_workspaces()[0].find("workspace"), std::string::npos);
}

TEST(ArenaProvider, WritePastTheEndNamesTheNodeAndTheBuffer) {
  HandRun run('B');  // x → affine → y, compact constants, no workspace
  const NodeId node = run.graph.order()[0];
  run.buffer(run.graph.inputs()[0]);
  auto y = run.buffer(run.graph.outputs()[0]);
  std::memset(y.data(), 0, y.size());
  // Four bytes past y's elements: inside y's planned padding, or whatever lies beyond.
  std::memset(y.data() + y.size(), 0x5A, 4);
  run.arena->after_node(node);
  ASSERT_EQ(run.arena->violations().size(), 1u);
  const ArenaViolation& v = run.arena->violations()[0];
  EXPECT_EQ(v.kind, ArenaViolation::Kind::kWriteOutside);
  EXPECT_EQ(v.node, run.graph.node(node).label());
  EXPECT_NE(v.message.find("0 B past the end of its output 'y'"), std::string::npos) << v.message;
}

TEST(ArenaProvider, WriteIntoTheGuardAfterTheArenaIsCaught) {
  HandRun run('B');
  const NodeId node = run.graph.order()[0];
  auto x = run.buffer(run.graph.inputs()[0]);
  run.buffer(run.graph.outputs()[0]);
  // The last byte of the guard after the arena, reached from x's base.
  const int64_t x_offset = run.plan.offsets[0];
  const int64_t past =
      run.plan.arena_bytes - x_offset + ArenaBufferProvider::kGuardBytes - 1;  // from x to the guard's last byte
  *(x.data() + past) = std::byte{0};
  run.arena->after_node(node);
  ASSERT_FALSE(run.arena->violations().empty());
  EXPECT_NE(run.arena->violations()[0].message.find("in the guard after the arena"), std::string::npos)
      << run.arena->violations()[0].message;
}

// The corpus (scripts/corpus/): every model runs bit-identically inside its plan. Skipped
// when there is no corpus, unless MEMLEDGER_REQUIRE_CORPUS=1 (CI) makes that a failure.
TEST(ArenaRun, EveryCorpusModelIsBitIdentical) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  const DeviceProfile host = builtin_profile("host");
  int models = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    SCOPED_TRACE(entry.path().string());
    ++models;
    const Graph g = import_onnx_file(entry.path().string());
    const ArenaRunReport r = arena_run(g, host);
    EXPECT_TRUE(r.clean()) << describe(r);
    EXPECT_TRUE(r.untouched_workspaces.empty());
    std::printf("arena %-28s arena %11lld B  peak-live %11lld B  ratio %.3f  violations %zu\n",
                entry.path().filename().c_str(), static_cast<long long>(r.arena_bytes),
                static_cast<long long>(r.peak_live_bytes), r.ratio(), r.violations.size());
  }
  EXPECT_GT(models, 0) << "no .onnx in " << dir;
}

// The same with the fast kernels, planned with their contracts (oneDNN's scratchpads and
// reorder buffers are workspaces): bit-identical to the ordinary fast run, no guard
// broken, every declared workspace written. With prepacked weights and without (then the
// weights' reorder buffers are workspace too).
TEST(ArenaRun, EveryCorpusModelIsBitIdenticalWithFastKernels) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  const DeviceProfile host = builtin_profile("host");
  int models = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    SCOPED_TRACE(entry.path().string());
    ++models;
    const Graph g = import_onnx_file(entry.path().string());
    for (bool prepack : {true, false}) {
      const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1, .prepack_weights = prepack};
      const MemoryPlan plan = plan_for_kernels(g, host, exec);
      const ArenaRunReport r = run_in_arena(g, plan, random_inputs(g, 7), exec);
      EXPECT_TRUE(r.clean()) << describe(r);
      EXPECT_TRUE(r.untouched_workspaces.empty()) << r.untouched_workspaces.size() << " untouched, first "
                                                  << (r.untouched_workspaces.empty() ? "" : r.untouched_workspaces[0]);
      int64_t workspaces = 0;
      for (const LiveBuffer& b : plan.liveness.buffers) workspaces += b.category == BufferCategory::kWorkspace;
      std::printf(
          "fast arena %-26s %-9s arena %11lld B  peak-live %11lld B  ratio %.3f  workspaces %lld  "
          "violations %zu\n",
          entry.path().filename().c_str(), prepack ? "prepack" : "per-run", static_cast<long long>(r.arena_bytes),
          static_cast<long long>(r.peak_live_bytes), r.ratio(), static_cast<long long>(workspaces),
          r.violations.size());
    }
  }
  EXPECT_GT(models, 0) << "no .onnx in " << dir;
}

}  // namespace
}  // namespace memledger
