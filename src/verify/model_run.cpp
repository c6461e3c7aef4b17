#include "memledger/verify/model_run.h"

#include <chrono>
#include <map>

#include "memledger/core/error.h"
#include "memledger/exec/buffer_provider.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/exec/planned_arena.h"

namespace memledger {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::vector<Tensor> inputs_by_name(const Graph& graph, const std::vector<Tensor>& inputs, const Graph& other) {
  ML_CHECK(inputs.size() == graph.inputs().size(), "{} inputs for {}", inputs.size(), graph.inputs().size());
  std::map<std::string, const Tensor*> by_name;
  for (size_t i = 0; i < inputs.size(); ++i) by_name.emplace(graph.value(graph.inputs()[i]).name, &inputs[i]);
  std::vector<Tensor> out;
  for (ValueId id : other.inputs()) {
    auto it = by_name.find(other.value(id).name);
    if (it == by_name.end()) fail("input '{}' is not an input of the model it is compared with", other.value(id).name);
    out.push_back(*it->second);
  }
  return out;
}

ModelRun run_model(const Graph& graph, const std::vector<Tensor>& inputs, const ModelRunOptions& options) {
  ModelRun r;
  {
    // One executor for the run, its summary and the repeats: a second one would prepack the
    // weights again while the first run's are still resident. A single run lets go of each
    // mapped weight after its last reader.
    const auto start = std::chrono::steady_clock::now();
    ExecOptions once = options.exec;
    once.release_weights_after_use = options.repeat == 0;
    // Prepacking holds a reordered copy of every weight beside the originals, which only
    // pays off over repeated runs; a single run reorders each weight into its node's
    // workspace, which is freed after the node (the same reorders, once).
    once.prepack_weights = options.exec.prepack_weights && options.repeat > 0;
    Executor executor(graph, once);
    r.outputs = executor.run(inputs);
    r.milliseconds = ms_since(start);
    r.kernels = executor.summary();
    if (options.repeat > 0) {
      HeapBufferProvider heap;
      std::vector<Tensor> scratch = executor.make_outputs();
      r.latency = time_runs(options.repeat, [&] { executor.run_into(inputs, scratch, heap); });
    }
  }
  if (options.arena) {
    r.arena = check_in_arena(graph, inputs, r.outputs, *options.arena);
    if (!r.arena->proved) return r;
    if (options.repeat > 0) {
      // The same kernels at the same planned offsets, without the guard checks.
      PlannedArena arena(r.arena->ran(), r.arena->plan);
      std::vector<Tensor> scratch = r.arena->executor->make_outputs();
      r.arena_latency = time_runs(options.repeat, [&] { r.arena->executor->run_into(inputs, scratch, arena); });
    }
  }
  if (options.compare) {
    const std::vector<Tensor> other_inputs = inputs_by_name(graph, inputs, *options.compare);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<Tensor> reference = run_graph(*options.compare, other_inputs,
                                                    {.kernels = options.exec.kernels,
                                                     .threads = options.exec.threads,
                                                     .max_memory_bytes = options.exec.max_memory_bytes});
    r.compare_milliseconds = ms_since(start);
    if (reference.size() != r.outputs.size())
      fail("the model compared with has {} outputs, this one {}", reference.size(), r.outputs.size());
    std::vector<std::string> names;
    for (ValueId id : graph.outputs()) names.push_back(graph.value(id).name);
    r.comparison = compare_outputs(names, r.outputs, reference, options.tolerance);
  }
  return r;
}

}  // namespace memledger
