#include "memledger/verify/arena_check.h"

#include <chrono>

#include "memledger/core/error.h"

namespace memledger {

std::unique_ptr<ArenaCheck> check_in_arena(const Graph& model, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& outputs, const ArenaCheckOptions& options) {
  auto c = std::make_unique<ArenaCheck>();
  const DeviceProfile profile = with_model_dtypes(options.device);
  c->graph = model;
  if (options.fit) {
    c->fit = fit_model(model, options.device, *options.fit);
  } else if (options.schedule == ScheduleKind::kMemory) {
    // A memory-aware order runs a reordered copy; its outputs must match the model order's.
    c->schedule = memory_aware_schedule(model, profile);
    c->graph.set_order(c->schedule->order);
  }
  const Graph& graph = c->ran();
  // A fit's plan chooses the kernels of its nodes (verify/fit_arena.h); otherwise the
  // executor is prepared once and the plan takes the kernels' contracts from it.
  if (c->fit) c->fit_arena = plan_fit_arena(*c->fit, options.device, options.exec);
  c->executor = std::make_unique<Executor>(graph, c->fit ? c->fit_arena->exec : options.exec);
  c->plan = c->fit ? c->fit_arena->plan : plan_for_kernels(*c->executor, profile);
  if (c->plan.arena_bytes > options.exec.max_memory_bytes)
    fail_option(ErrorOption::kMemoryLimit, "the arena of {} B is more than the memory limit of {} B",
                c->plan.arena_bytes, options.exec.max_memory_bytes);
  // The fast kernels' arena run of a fit is compared with their ordinary run of the fit's
  // graph, whose difference from the model's outputs the report prints (verify/fit_arena.h).
  if (c->fit) c->compared_with = fit_arena_reference(*c->fit_arena, *c->executor, inputs, outputs);
  const auto start = std::chrono::steady_clock::now();
  c->run = run_in_arena(*c->executor, graph, c->plan, inputs, c->compared_with.outputs(outputs));
  c->milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  c->proved = c->fit ? fit_arena_proved(*c->fit, *c->fit_arena, c->run) : c->run.clean();
  return c;
}

}  // namespace memledger
