// The text of an arena run (`run --arena`): with a fit first the fit's verdict, the in-place
// decisions of the plan that ran against the fit's, and how the fit's graph compares with the
// model under the fast kernels (verify/fit_arena.h); then the run's line (placement, kernels,
// time), the plan's bytes against the fit's, the guards, the workspaces and the outputs.
#pragma once

#include <string>

#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/kernel_set.h"
#include "memledger/fit/fit.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/verify/fit_arena.h"

namespace memledger {

struct ArenaRunContext {
  const Graph* graph = nullptr;          // the graph that ran (the fit's, with a fit)
  const MemoryPlan* plan = nullptr;      // the plan it ran in
  const DeviceProfile* given = nullptr;  // the profile as given (its storage dtype, if any)
  KernelSet kernels = KernelSet::kReference;
  double milliseconds = 0;  // the arena run's time
  // With a fit: its result, the plan made for the kernels, what the run was compared with.
  const FitResult* fit = nullptr;
  const FitArenaPlan* fit_arena = nullptr;
  const FitArenaReference* compared_with = nullptr;
};

std::string arena_run_text(const ArenaRunReport& run, const ArenaRunContext& context);

}  // namespace memledger
