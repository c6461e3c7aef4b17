// What `memledger run` does with a model and its inputs, as one call: the ordinary run (one
// executor for it, its summary and the timed repeats), then optionally the run inside the
// planned arena (verify/arena_check.h) and its timed repeats at the planned offsets, then
// optionally another model on the same inputs, compared output by output.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/exec/kernel_set.h"
#include "memledger/exec/latency.h"
#include "memledger/ir/graph.h"
#include "memledger/verify/arena_check.h"
#include "memledger/verify/verify.h"

namespace memledger {

struct ModelRunOptions {
  ExecOptions exec;
  int repeat = 0;  // timed runs after a warm-up (0: one run, which lets go of each mapped weight after use)
  std::optional<ArenaCheckOptions> arena;
  // Run this model on the same inputs (matched by name) and compare the outputs.
  const Graph* compare = nullptr;
  double tolerance = 1e-4;
};

struct ModelRun {
  std::vector<Tensor> outputs;
  double milliseconds = 0;  // the first run, preparation included
  std::string kernels;      // Executor::summary()
  std::optional<LatencyStats> latency;
  std::unique_ptr<ArenaCheck> arena;          // with options.arena
  std::optional<LatencyStats> arena_latency;  // with repeat, when the arena run proved its plan
  std::optional<Verification> comparison;     // with options.compare, when the arena run (if any) proved it
  double compare_milliseconds = 0;

  // What the run failed to prove: the arena run, or the comparison beyond the tolerance.
  bool arena_failed() const { return arena && !arena->proved; }
  bool differs() const { return comparison && !comparison->ok; }
};

// The other model's inputs taken by name from `inputs` (the inputs of `graph`, in its
// order); an Error naming the input `other` has and `graph` does not.
std::vector<Tensor> inputs_by_name(const Graph& graph, const std::vector<Tensor>& inputs, const Graph& other);

ModelRun run_model(const Graph& graph, const std::vector<Tensor>& inputs, const ModelRunOptions& options);

}  // namespace memledger
