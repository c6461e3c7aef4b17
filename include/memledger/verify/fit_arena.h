// Proving a fit by running it: which plan `run --arena --fit` runs under a kernel set, how
// it differs from the fit's, and when a clean arena run proves the fit's own plan.
//
// The fit sizes its plan by the op table's contracts, the reference kernels' own. With
// those kernels the run takes the fit's plan with the model's dtypes (as the interpreter
// computes in them; a quantized model's plan is already in its own bytes). The fast kernels
// declare contracts of their own (oneDNN's workspaces, the in-place promises each keeps),
// so they plan the fit's graph, order, patches and in-place options with those, and the
// run proves that plan rather than the fit's. Where that plan passes the device's capacity
// and the reference kernels' does not, the nodes whose fast contracts pass it (a workspace
// the table's kernel does not need, an in-place promise dropped) run on the reference
// kernels, round by round at the steps over the capacity, until the plan is within it: the
// fastest run the capacity allows, as a device would run the int8 model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/compare.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/kernel_set.h"
#include "memledger/fit/fit.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

// Rounds of moving nodes to the reference kernels before the fast plan is left as it is.
inline constexpr int kFitArenaRounds = 16;

struct FitArenaPlan {
  MemoryPlan plan;  // under the profile with the model's dtypes (with_model_dtypes)
  KernelSet kernels = KernelSet::kReference;
  ExecOptions exec;  // what the arena run's executor is made with (reference_nodes included)
  // Fast set: the nodes moved to the reference kernels to keep within the capacity, and the
  // arena the fast contracts alone would take (0 when nothing was moved).
  std::vector<std::string> reference_nodes;
  int64_t fast_over_capacity_bytes = 0;
  // Against the fit's plan (in_place_differences): buffers whose in-place decision differs.
  std::vector<std::string> in_place_differences;
};

// What the arena run of a fit is compared with. With the reference kernels, the model's own
// outputs: a patch computes the same bits as the whole there, so a clean run proves the fit
// keeps the model's numbers. With the fast kernels, the ordinary run of the fit's graph with
// them: oneDNN picks a convolution's blocking by its size, so a patched graph may round
// differently from the whole model (under an AVX2 cap, most of mobilenet_v2's logits, by about
// 1e-6); how far it is from the model's outputs is `patched_difference`, one per output.
struct FitArenaReference {
  // Fast kernels only (empty otherwise): the fit graph's outputs, and per output their
  // difference from the model's.
  std::optional<std::vector<Tensor>> fit_graph_outputs;
  std::vector<TensorDifference> patched_difference;
  // What the arena run is compared with.
  const std::vector<Tensor>& outputs(const std::vector<Tensor>& model_outputs) const {
    return fit_graph_outputs ? *fit_graph_outputs : model_outputs;
  }
};
// `executor` runs the fit's graph with the arena's kernels.
FitArenaReference fit_arena_reference(const FitArenaPlan& arena, Executor& executor, const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor>& model_outputs);

// `profile` is the one the fit ran under (with its storage dtype, if any); `exec` the kernels
// asked for. The arena run's executor is made with the result's `exec`.
FitArenaPlan plan_fit_arena(const FitResult& fit, const DeviceProfile& profile, const ExecOptions& exec);

// Whether the arena run `run` of `arena` proves what it was run for: with the fast kernels
// their own plan of the fit's graph (a clean run); with the reference kernels the fit's
// plan itself, so also the same in-place decisions and, for a quantized model (planned in
// its own bytes either way), the same arena bytes.
bool fit_arena_proved(const FitResult& fit, const FitArenaPlan& arena, const ArenaRunReport& run);

}  // namespace memledger
