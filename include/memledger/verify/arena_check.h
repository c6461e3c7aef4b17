// Running a model inside its planned arena (`run --arena`): the plan for the kernels that
// run it, in the model's own order, a memory-aware order, or the plan `fit` finds for the
// device (verify/fit_arena.h), then the guarded run against the model's ordinary outputs
// (exec/arena_run.h) and the verdict: whether the run proves what it was run for.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/fit/fit.h"
#include "memledger/fit/schedule.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/verify/fit_arena.h"

namespace memledger {

struct ArenaCheckOptions {
  DeviceProfile device;  // as given (its storage dtype, if any; a fit's capacity already set)
  ExecOptions exec;
  // Run the plan fit_model finds with these options; otherwise the model's graph in
  // `schedule`'s order.
  std::optional<FitOptions> fit;
  ScheduleKind schedule = ScheduleKind::kModel;
};

// Everything the run's report needs, and the executor and plan a timed repeat runs again.
// Held by pointer: the executor and the report refer into its graph and fit.
struct ArenaCheck {
  std::optional<ScheduleResult> schedule;  // with ScheduleKind::kMemory
  std::optional<FitResult> fit;
  std::optional<FitArenaPlan> fit_arena;
  Graph graph;  // the graph that ran: the model's (maybe reordered); a fit's is fit->graph
  MemoryPlan plan;
  std::unique_ptr<Executor> executor;
  FitArenaReference compared_with;
  ArenaRunReport run;
  double milliseconds = 0;  // the guarded run's
  bool proved = false;      // fit_arena_proved for a fit, else a clean run

  const Graph& ran() const { return fit ? fit->graph : graph; }
};

// `outputs` are the model's ordinary outputs on `inputs`. The arena larger than
// options.exec.max_memory_bytes is an Error (ErrorOption::kMemoryLimit) before it runs.
std::unique_ptr<ArenaCheck> check_in_arena(const Graph& model, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& outputs, const ArenaCheckOptions& options);

}  // namespace memledger
