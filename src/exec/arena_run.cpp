#include "memledger/exec/arena_run.h"

#include <cstring>

#include "memledger/exec/interpreter.h"
#include "memledger/plan/banked_plan.h"

namespace memledger {
namespace {

// How many elements of `a` differ bitwise from `b` (same dtype and shape), or -1.
int64_t differing_elements(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return -1;
  const size_t size = static_cast<size_t>(host_element_bytes(a.dtype()));
  int64_t count = 0;
  for (int64_t i = 0; i < a.elements(); ++i) {
    const size_t at = static_cast<size_t>(i) * size;
    if (std::memcmp(a.bytes().data() + at, b.bytes().data() + at, size) != 0) ++count;
  }
  return count;
}

}  // namespace

DeviceProfile with_model_dtypes(DeviceProfile profile) {
  profile.storage.reset();
  return profile;
}

MemoryPlan arena_layout(MemoryPlan plan) { return banks_end_to_end(std::move(plan), ArenaBufferProvider::kGuardBytes); }

MemoryPlan plan_for_kernels(const Graph& graph, const DeviceProfile& profile, const ExecOptions& exec,
                            const PlanOptions& options, const PlacementOptions& placement) {
  PlanOptions with_contracts = options;
  with_contracts.contracts = contract_source(exec);
  if (!profile.banks.empty()) return arena_layout(plan_memory_banked(graph, profile, with_contracts, placement));
  return plan_memory(graph, profile, with_contracts, placement);
}

MemoryPlan plan_for_kernels(const Executor& executor, const DeviceProfile& profile, const PlanOptions& options,
                            const PlacementOptions& placement) {
  PlanOptions with_contracts = options;
  with_contracts.contracts = executor.contract_source();
  const Graph& graph = executor.graph();
  if (!profile.banks.empty()) return arena_layout(plan_memory_banked(graph, profile, with_contracts, placement));
  return plan_memory(graph, profile, with_contracts, placement);
}

ArenaRunReport run_in_arena(Executor& executor, const Graph& graph, const MemoryPlan& plan,
                            const std::vector<Tensor>& inputs, const std::vector<Tensor>& reference) {
  ArenaRunReport report;
  report.arena_bytes = plan.arena_bytes;
  report.peak_live_bytes = plan.ledger.peak_live_bytes;
  ArenaBufferProvider arena(graph, plan);
  try {
    report.outputs = executor.run(inputs, &arena, [&](NodeId node) { arena.after_node(node); });
  } catch (const Error& e) {
    report.failure = e.what();
  }
  report.violations = arena.violations();
  report.untouched_workspaces = arena.untouched_workspaces();
  if (!report.failure.empty()) return report;
  ML_CHECK(report.outputs.size() == reference.size(), "{} outputs against {} reference outputs", report.outputs.size(),
           reference.size());
  for (size_t i = 0; i < reference.size(); ++i) {
    const int64_t differ = differing_elements(report.outputs[i], reference[i]);
    if (differ == 0) continue;
    const std::string& name = graph.value(graph.outputs()[i]).name;
    report.differing_outputs.push_back(
        differ < 0 ? fmt::format("'{}': dtype or shape differ", name)
                   : fmt::format("'{}': {} of {} elements differ", name, differ, reference[i].elements()));
  }
  return report;
}

ArenaRunReport run_in_arena(const Graph& graph, const MemoryPlan& plan, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& reference, const ExecOptions& exec) {
  Executor executor(graph, exec);
  return run_in_arena(executor, graph, plan, inputs, reference);
}

ArenaRunReport run_in_arena(const Graph& graph, const MemoryPlan& plan, const std::vector<Tensor>& inputs,
                            const ExecOptions& exec) {
  Executor executor(graph, exec);
  const std::vector<Tensor> reference = executor.run(inputs);
  return run_in_arena(executor, graph, plan, inputs, reference);
}

}  // namespace memledger
