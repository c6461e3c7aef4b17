// `run --arena` as a library call: runs a graph inside its MemoryPlan with the
// ArenaBufferProvider and compares the outputs with an ordinary (heap) run, which must be
// bit-identical (DESIGN.md §4.4). The verdict a test or the CLI reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_provider.h"
#include "memledger/exec/executor.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

struct ArenaRunReport {
  int64_t arena_bytes = 0;
  int64_t peak_live_bytes = 0;
  std::vector<ArenaViolation> violations;
  std::vector<std::string> untouched_workspaces;
  // One line per output that is not bit-identical to the heap run's: name and how many
  // elements differ.
  std::vector<std::string> differing_outputs;
  // Set when the arena run stopped with an error (a kernel read indices the plan broke).
  std::string failure;
  std::vector<Tensor> outputs;  // the arena run's

  double ratio() const {
    return peak_live_bytes > 0 ? static_cast<double>(arena_bytes) / static_cast<double>(peak_live_bytes) : 1.0;
  }
  // No guard broken, every output bit-identical. Untouched workspaces are reported, not
  // failures: they waste memory, they do not change numbers.
  bool clean() const { return violations.empty() && differing_outputs.empty() && failure.empty(); }
};

// The profile the arena run plans with: `profile` with the model's own dtypes, since the
// interpreter computes in them.
DeviceProfile with_model_dtypes(DeviceProfile profile);

// A plan as the arena runner lays it out: a banked plan's writable banks end to end with the
// provider's kGuardBytes between them (plan/banked_plan.h); any other plan as it is.
MemoryPlan arena_layout(MemoryPlan plan);

// Plans `graph` for the kernels `exec` runs: their contracts (the fast set's workspaces are
// oneDNN's scratchpads and reorder buffers) instead of the reference kernels' that
// plan_memory reads by default. On a device with banks, the banked plan with its banks laid
// laid out by arena_layout.
MemoryPlan plan_for_kernels(const Graph& graph, const DeviceProfile& profile, const ExecOptions& exec,
                            const PlanOptions& options = {}, const PlacementOptions& placement = {});

// The same with the contracts `executor` prepared (Executor::contract_source), for the graph
// it was made for: the graph is not prepared a second time to learn them.
MemoryPlan plan_for_kernels(const Executor& executor, const DeviceProfile& profile, const PlanOptions& options = {},
                            const PlacementOptions& placement = {});

// Runs `graph` on `inputs` inside `plan` with the kernels of `exec` and compares with
// `reference`, the outputs of an ordinary run with the same kernels on the same inputs.
// The plan must be made for those kernels (plan_memory: the reference set; plan_for_kernels
// for any). Errors of the inputs themselves propagate (as from run_graph); an error inside
// the arena run is reported in `failure`.
ArenaRunReport run_in_arena(const Graph& graph, const MemoryPlan& plan, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& reference,
                            const ExecOptions& exec = {.kernels = KernelSet::kReference, .threads = 1});
// The same, with the ordinary run made here.
ArenaRunReport run_in_arena(const Graph& graph, const MemoryPlan& plan, const std::vector<Tensor>& inputs,
                            const ExecOptions& exec = {.kernels = KernelSet::kReference, .threads = 1});
// The same on a prepared executor (its kernels and threads), for repeated runs.
ArenaRunReport run_in_arena(Executor& executor, const Graph& graph, const MemoryPlan& plan,
                            const std::vector<Tensor>& inputs, const std::vector<Tensor>& reference);

}  // namespace memledger
