#include "memledger/verify/fit_arena.h"

#include "memledger/core/error.h"

#include "memledger/ir/integer_node.h"

namespace memledger {

FitArenaPlan plan_fit_arena(const FitResult& fit, const DeviceProfile& profile, const Executor& executor) {
  ML_CHECK(&executor.graph() == &fit.graph, "the executor is not the fit graph's");
  FitArenaPlan out;
  out.kernels = executor.options().kernels;
  if (out.kernels == KernelSet::kReference)
    out.plan = is_quantized_model(fit.graph) ? fit.plan : fit_arena_plan(fit, profile);
  else
    out.plan = plan_for_kernels(executor, with_model_dtypes(profile), fit.plan_options);
  out.in_place_differences = in_place_differences(fit.plan, out.plan);
  return out;
}

FitArenaReference fit_arena_reference(const FitArenaPlan& arena, Executor& executor, const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor>& model_outputs) {
  FitArenaReference out;
  if (arena.kernels == KernelSet::kReference) return out;
  out.fit_graph_outputs = executor.run(inputs);
  ML_CHECK(out.fit_graph_outputs->size() == model_outputs.size(), "{} outputs against the model's {}",
           out.fit_graph_outputs->size(), model_outputs.size());
  for (size_t i = 0; i < model_outputs.size(); ++i)
    out.patched_difference.push_back(compare_tensors((*out.fit_graph_outputs)[i], model_outputs[i], 0, 0));
  return out;
}

bool fit_arena_proved(const FitResult& fit, const FitArenaPlan& arena, const ArenaRunReport& run) {
  if (!run.clean()) return false;
  if (arena.kernels != KernelSet::kReference) return true;
  return arena.in_place_differences.empty() &&
         (!is_quantized_model(fit.graph) || arena.plan.arena_bytes == fit.plan.arena_bytes);
}

}  // namespace memledger
