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

// Runs `graph` on `inputs` inside `plan` and compares with `reference`, the outputs of an
// ordinary run on the same inputs. Errors of the inputs themselves propagate (as from
// run_graph); an error inside the arena run is reported in `failure`.
ArenaRunReport run_in_arena(const Graph& graph, const MemoryPlan& plan, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& reference);
// The same, with the ordinary run made here.
ArenaRunReport run_in_arena(const Graph& graph, const MemoryPlan& plan, const std::vector<Tensor>& inputs);

}  // namespace memledger
