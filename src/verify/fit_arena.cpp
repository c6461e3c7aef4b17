#include "memledger/verify/fit_arena.h"

#include <algorithm>
#include <set>

#include "memledger/core/error.h"
#include "memledger/exec/arena_run.h"
#include "memledger/ir/integer_node.h"

namespace memledger {
namespace {

// The plan the reference kernels run: the fit's own for a quantized model (already in its
// bytes), else the fit's graph and decisions under the model's dtypes.
// A plan across banks runs with its banks laid end to end, guard bytes between them
// (plan/banked_plan.h).
MemoryPlan reference_arena_plan(const FitResult& fit, const DeviceProfile& profile) {
  return is_quantized_model(fit.graph) ? arena_layout(fit.plan) : fit_arena_plan(fit, profile);
}

// Whether the fast contract of node `id` differs from the op table's: it declares workspace
// the reference kernel does not, or drops an in-place promise the table makes.
bool contract_differs(const Graph& g, NodeId id, const DeviceProfile& profile, const ContractSource& fast,
                      const ContractSource& table) {
  const KernelContract a = fast(g, id, profile), b = table(g, id, profile);
  return a.workspace_bytes > b.workspace_bytes || a.overwritable_inputs != b.overwritable_inputs;
}

// Nodes of the fast plan to move to the reference kernels: at each step whose live bytes
// pass the capacity (or, when none does but the placement does, the peak step), the node run
// there when its fast contract differs from the table's. Not yet in `taken`, in step order.
std::vector<std::string> nodes_over_capacity(const Graph& g, const MemoryPlan& plan, const DeviceProfile& profile,
                                             const ExecOptions& exec, const std::set<std::string>& taken) {
  const ContractSource fast = contract_source(exec);
  const ContractSource table = contract_source({.kernels = KernelSet::kReference});
  std::vector<int> steps;
  for (const TimelineStep& s : plan.ledger.timeline)
    if (s.live_bytes > plan.capacity_bytes) steps.push_back(s.step);
  if (steps.empty()) steps.push_back(plan.ledger.peak_step);
  std::vector<std::string> found;
  for (int step : steps) {
    const TimelineStep& s = plan.ledger.timeline.at(static_cast<size_t>(step));
    const std::string& name = g.node(s.node).name;
    if (taken.count(name) == 0 && contract_differs(g, s.node, profile, fast, table)) found.push_back(name);
  }
  return found;
}

}  // namespace

FitArenaPlan plan_fit_arena(const FitResult& fit, const DeviceProfile& profile, const ExecOptions& exec) {
  FitArenaPlan out;
  out.kernels = exec.kernels;
  out.exec = exec;
  if (out.kernels == KernelSet::kReference) {
    out.plan = reference_arena_plan(fit, profile);
  } else {
    const DeviceProfile own = with_model_dtypes(profile);
    out.plan = plan_for_kernels(fit.graph, own, out.exec, fit.plan_options);
    // Within the capacity where the reference kernels' plan is (the device's kernels): the
    // nodes whose fast contracts pass it run on the reference kernels, a round at a time.
    // The reference plan's bytes are the fit's own where the run keeps the fit's dtypes (a
    // quantized model, or a profile without a storage dtype); a float shadow of an int8 plan
    // is no figure to keep within.
    const int64_t capacity = profile.capacity_bytes;
    // On a device with banks the fast kernels' plan is one across the banks too
    // (plan_for_kernels), not an arena to keep within one capacity.
    const bool own_bytes = is_quantized_model(fit.graph) || !profile.storage;
    if (capacity > 0 && own_bytes && profile.banks.empty() && out.plan.arena_bytes > capacity &&
        fit.plan.arena_bytes <= capacity) {
      out.fast_over_capacity_bytes = out.plan.arena_bytes;
      std::set<std::string> taken;
      for (int round = 0; round < kFitArenaRounds && out.plan.arena_bytes > capacity; ++round) {
        const std::vector<std::string> more = nodes_over_capacity(fit.graph, out.plan, own, out.exec, taken);
        if (more.empty()) break;
        for (const std::string& name : more) {
          taken.insert(name);
          out.exec.reference_nodes.push_back(name);
        }
        out.plan = plan_for_kernels(fit.graph, own, out.exec, fit.plan_options);
      }
      out.reference_nodes = out.exec.reference_nodes;
    }
  }
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
         (!is_quantized_model(fit.graph) || arena.plan.arena_bytes == arena_layout(fit.plan).arena_bytes);
}

}  // namespace memledger
