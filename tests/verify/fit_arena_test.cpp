// The plan that proves a fit (verify/fit_arena.h): with the reference kernels the fit's own
// plan under the model's dtypes, proved only with the same in-place decisions; with the fast
// kernels their own plan of the fit's graph, with the workspaces they declare, proved by a
// clean run. A broken guard proves nothing under either set.
#include "memledger/verify/fit_arena.h"

#include <gtest/gtest.h>

#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

struct FitArena : testing::Test {
  Graph graph = import_onnx_file(MEMLEDGER_SOURCE_DIR "/tests/data/onnx/conv_bn_relu.onnx");
  DeviceProfile mcu = builtin_profile("mcu");
  FitResult fit = fit_model(graph, mcu);
  std::vector<Tensor> inputs = random_inputs(graph, 5);
};

TEST_F(FitArena, TheReferenceKernelsRunTheFitsOwnPlan) {
  Executor executor(fit.graph, {.kernels = KernelSet::kReference, .threads = 1});
  const FitArenaPlan arena = plan_fit_arena(fit, mcu, executor.options());
  const MemoryPlan expected = fit_arena_plan(fit, mcu);
  EXPECT_EQ(arena.plan.offsets, expected.offsets);
  EXPECT_EQ(arena.plan.arena_bytes, expected.arena_bytes);
  EXPECT_TRUE(arena.in_place_differences.empty());
  EXPECT_GT(arena.plan.liveness.declared_workspace_bytes(), 0);  // the op table's Conv declares its im2col rows
  const ArenaRunReport run = run_in_arena(fit.graph, arena.plan, inputs);
  ASSERT_TRUE(run.clean());
  // Compared with the model's own outputs.
  const std::vector<Tensor> model_outputs = run_graph(graph, inputs, {.kernels = KernelSet::kReference});
  const FitArenaReference compared = fit_arena_reference(arena, executor, inputs, model_outputs);
  EXPECT_FALSE(compared.fit_graph_outputs.has_value());
  EXPECT_EQ(&compared.outputs(model_outputs), &model_outputs);  // the model's own, not a copy
  EXPECT_TRUE(compared.patched_difference.empty());
  EXPECT_TRUE(fit_arena_proved(fit, arena, run));

  // The same run with a decision that differs from the fit's proves nothing about the fit.
  FitArenaPlan differing = arena;
  differing.in_place_differences.push_back("'y': own storage in one, in place over 'x' in the other");
  EXPECT_FALSE(fit_arena_proved(fit, differing, run));
}

TEST_F(FitArena, TheFastKernelsRunTheirOwnPlanOfTheFitsGraph) {
  const ExecOptions fast{.kernels = KernelSet::kFast, .threads = 1};
  Executor executor(fit.graph, fast);
  const FitArenaPlan arena = plan_fit_arena(fit, mcu, fast);
  EXPECT_EQ(arena.kernels, KernelSet::kFast);
  EXPECT_TRUE(arena.reference_nodes.empty());  // within the capacity as it is
  EXPECT_EQ(arena.fast_over_capacity_bytes, 0);
  EXPECT_EQ(arena.plan.liveness.schedule, fit.plan.liveness.schedule);  // the fit's order
  int64_t workspace = 0;
  for (const KernelContract& c : arena.plan.liveness.contracts) workspace += c.workspace_bytes;
  EXPECT_EQ(arena.plan.liveness.declared_workspace_bytes(), workspace);
  // The prepared executor's contracts are those contract_source gives without it.
  const MemoryPlan unprepared = plan_for_kernels(executor, with_model_dtypes(mcu), fit.plan_options);
  EXPECT_EQ(arena.plan.offsets, unprepared.offsets);
  EXPECT_EQ(arena.plan.arena_bytes, unprepared.arena_bytes);
  for (size_t i = 0; i < unprepared.liveness.contracts.size(); ++i)
    EXPECT_EQ(arena.plan.liveness.contracts[i].workspace_bytes, unprepared.liveness.contracts[i].workspace_bytes) << i;
  const ArenaRunReport run = run_in_arena(fit.graph, arena.plan, inputs, fast);
  ASSERT_TRUE(run.clean());
  // Compared with their own ordinary run of the fit's graph, and that with the model's: the
  // model fits without patches, so the two graphs are one and agree to the bit.
  const std::vector<Tensor> model_outputs = run_graph(graph, inputs, {.kernels = KernelSet::kFast});
  const FitArenaReference compared = fit_arena_reference(arena, executor, inputs, model_outputs);
  ASSERT_TRUE(compared.fit_graph_outputs.has_value());
  EXPECT_EQ(&compared.outputs(model_outputs), &*compared.fit_graph_outputs);
  ASSERT_EQ(compared.patched_difference.size(), model_outputs.size());
  EXPECT_EQ(compared.patched_difference[0].max_abs, 0);
  EXPECT_EQ(compared.patched_difference[0].mismatches, 0);
  EXPECT_FALSE(fit.patches.has_value());
  // Their plan is what the run proves, whatever its decisions against the fit's.
  FitArenaPlan differing = arena;
  differing.in_place_differences.push_back("'y': own storage in one, in place over 'x' in the other");
  EXPECT_TRUE(fit_arena_proved(fit, differing, run));

  ArenaRunReport broken = run;
  broken.violations.push_back({.kind = ArenaViolation::Kind::kOverlapsLive, .node = "conv", .message = "made up"});
  EXPECT_FALSE(fit_arena_proved(fit, arena, broken));
}

}  // namespace
}  // namespace memledger
