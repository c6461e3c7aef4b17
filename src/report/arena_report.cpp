#include "memledger/report/arena_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>

#include "memledger/exec/arena_provider.h"
#include "memledger/exec/arena_run.h"
#include "memledger/ir/integer_node.h"
#include "memledger/report/fit_report.h"

namespace memledger {
namespace {

// The fit's verdict, the in-place decisions against its plan, and the fit's graph against the model.
void append_fit(std::string& out, const ArenaRunContext& c) {
  const DeviceProfile& given = *c.given;
  fmt::format_to(std::back_inserter(out), "fit plan on '{}': {}\n", given.name, fit_verdict(*c.fit, given));
  const std::vector<std::string>& differ = c.fit_arena->in_place_differences;
  if (differ.empty())
    fmt::format_to(std::back_inserter(out), "  in-place decisions: the same as the fit's plan under '{}'\n",
                   given.name);
  else
    fmt::format_to(
        std::back_inserter(out), "  in-place decisions: {} differ from the fit's plan {}\n", differ.size(),
        c.kernels == KernelSet::kReference ? "with the model's dtypes" : "under the fast kernels' contracts");
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < std::min(differ.size(), kShown); ++i)
    fmt::format_to(std::back_inserter(out), "    {}\n", differ[i]);
  if (differ.size() > kShown) fmt::format_to(std::back_inserter(out), "    and {} more\n", differ.size() - kShown);
  const std::vector<TensorDifference>& patched = c.compared_with->patched_difference;
  for (size_t i = 0; i < patched.size(); ++i)
    fmt::format_to(
        std::back_inserter(out), "  the fit's graph against the model, {} kernels: output '{}' {}\n",
        kernel_set_name(c.kernels), c.graph->value(c.graph->outputs()[i]).name,
        patched[i].max_abs == 0 && patched[i].mismatches == 0 ? std::string("bit-identical") : patched[i].describe());
}

// A fit planned across banks runs with its writable banks end to end, guard bytes between
// them (plan/banked_plan.h): each bank's planned bytes, and the arena they make.
void append_banks(std::string& out, const MemoryPlan& fit_plan, const MemoryPlan& run_plan) {
  const BankedPlacement& banked = *fit_plan.banked;
  std::vector<std::string> banks;
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    const int64_t bytes = banked.solution.banks.at(k).solution.arena_bytes;
    if (!banked.banks[k].read_only && bytes > 0) banks.push_back(fmt::format("{} {} B", banked.banks[k].name, bytes));
  }
  const int64_t laid = arena_layout(fit_plan).arena_bytes;
  fmt::format_to(std::back_inserter(out),
                 "  arena: the fit's writable banks as planned ({}), end to end with {} guard bytes between them: "
                 "{} B {} the {} B they take\n",
                 fmt::join(banks, ", "), ArenaBufferProvider::kGuardBytes, run_plan.arena_bytes,
                 run_plan.arena_bytes == laid ? "=" : "≠", laid);
}

}  // namespace

std::string arena_run_text(const ArenaRunReport& r, const ArenaRunContext& c) {
  std::string out;
  const DeviceProfile& given = *c.given;
  const MemoryPlan& plan = *c.plan;
  if (c.fit) append_fit(out, c);
  // A quantized model is planned in its own integer bytes under any profile (plan/liveness);
  // a float model under an int8 profile runs as a float shadow of the planned figure.
  const bool quantized = is_quantized_model(*c.graph);
  std::string mode;
  if (quantized)
    mode = " (a quantized model: its own integer bytes)";
  else if (given.storage)
    mode = fmt::format(" (float shadow: planned with the model's dtypes, not {})", dtype_name(*given.storage));
  fmt::format_to(std::back_inserter(out), "arena run on '{}'{}: {} placement{}, {} kernels, {:.1f} ms\n", given.name,
                 mode, plan.algorithm, plan.optimal ? " (optimal)" : "", kernel_set_name(c.kernels), c.milliseconds);
  if (c.fit && c.fit->plan.banked) {
    append_banks(out, c.fit->plan, plan);
  } else if (c.fit) {
    fmt::format_to(std::back_inserter(out), "  arena bytes {} {} the fit's planned bytes {}{}\n", plan.arena_bytes,
                   plan.arena_bytes == c.fit->plan.arena_bytes ? "=" : "≠", c.fit->plan.arena_bytes,
                   quantized || !given.storage ? "" : " (the float shadow's arena, not the planned figure)");
  }
  if (c.fit) {
    if (c.kernels != KernelSet::kReference)
      fmt::format_to(
          std::back_inserter(out), "  fast kernels' contracts: {} B of declared workspace over {} steps{}\n",
          plan.liveness.declared_workspace_bytes(), plan.liveness.contracts.size(),
          (quantized || !given.storage) && given.banks.empty()
              ? fmt::format(", arena {} the capacity of {} B",
                            plan.arena_bytes <= given.capacity_bytes ? "within" : "over", given.capacity_bytes)
              : "");
    if (c.fit_arena && !c.fit_arena->reference_nodes.empty()) {
      const std::vector<std::string>& moved = c.fit_arena->reference_nodes;
      std::string names;
      constexpr size_t kNamed = 3;
      for (size_t i = 0; i < std::min(moved.size(), kNamed); ++i)
        names += fmt::format("{}'{}'", i ? ", " : "", moved[i]);
      if (moved.size() > kNamed) names += fmt::format(" and {} more", moved.size() - kNamed);
      fmt::format_to(std::back_inserter(out),
                     "  within the capacity: {} node{} on the reference kernels (their fast contracts took the "
                     "arena to {} B): {}\n",
                     moved.size(), moved.size() == 1 ? "" : "s", c.fit_arena->fast_over_capacity_bytes, names);
    }
    if (c.kernels != KernelSet::kReference && plan.arena_bytes != c.fit->plan.arena_bytes)
      out +=
          "  the fit's plan holds for kernels with the op table's contracts, as a device's are: `--kernels "
          "reference` runs that very plan\n";
  }
  fmt::format_to(std::back_inserter(out),
                 "  arena {} B, peak-live {} B, arena / peak-live {:.3f}, guards {} B at each end\n", r.arena_bytes,
                 r.peak_live_bytes, r.ratio(), ArenaBufferProvider::kGuardBytes);
  fmt::format_to(std::back_inserter(out), "  guard violations: {}\n", r.violations.size());
  for (const ArenaViolation& v : r.violations)
    fmt::format_to(std::back_inserter(out), "    {}: {}\n", to_string(v.kind), v.message);
  if (r.untouched_workspaces.empty()) {
    fmt::format_to(std::back_inserter(out), "  untouched workspaces: 0\n");
  } else {
    fmt::format_to(std::back_inserter(out), "  untouched workspaces: {} (declared but never written)\n",
                   r.untouched_workspaces.size());
    for (const std::string& name : r.untouched_workspaces) fmt::format_to(std::back_inserter(out), "    {}\n", name);
  }
  if (!r.failure.empty()) fmt::format_to(std::back_inserter(out), "  the arena run stopped: {}\n", r.failure);
  const bool fit_graph = c.compared_with && c.compared_with->fit_graph_outputs;
  const std::string ordinary = fit_graph ? "the ordinary run of the fit's graph" : "the ordinary run";
  const size_t outputs = c.graph->outputs().size();
  if (r.failure.empty() && r.differing_outputs.empty())
    fmt::format_to(std::back_inserter(out), "  outputs: bit-identical to {} ({} of {})\n", ordinary, outputs, outputs);
  for (const std::string& d : r.differing_outputs)
    fmt::format_to(std::back_inserter(out), "  output {} from {}\n", d, ordinary);
  return out;
}

}  // namespace memledger
