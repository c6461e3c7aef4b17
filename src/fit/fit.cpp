#include "memledger/fit/fit.h"

#include <chrono>
#include <map>

#include "fit_patches.h"
#include "memledger/core/error.h"
#include "memledger/fit/strategy.h"

namespace memledger {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Bad input the fit refuses before any step: nothing to fit to, a grid that cannot be.
void check_fit_input(const DeviceProfile& profile, const FitOptions& options) {
  if (profile.unlimited())
    fail("device '{}' ({}) has no capacity (capacity_bytes = 0): fit needs a memory to fit into", profile.name,
         profile.source);
  for (const auto& [rows, cols] : options.grids) ML_CHECK(rows >= 1 && cols >= 1, "patch grid {}x{}", rows, cols);
  if (options.inner_patch && !options.patch)
    fail("an inner patch grid ({}x{}) needs the outer grid it runs inside", options.inner_patch->rows,
         options.inner_patch->cols);
}

// The step joins the script; when the rule keeps it, its graph and plan are the result's.
void record(FitResult& result, FitAttempt attempt, bool forced, FitPreference prefer) {
  attempt.step.kept = keeps_attempt(result, attempt, forced, prefer);
  if (attempt.step.kept) {
    FitCandidate& c = *attempt.candidate;
    result.graph = std::move(c.graph);
    result.plan = std::move(c.plan);
    result.plan_options = c.plan_options;
    result.patches = std::move(c.patches);
  }
  result.steps.push_back(std::move(attempt.step));
}

}  // namespace

std::string_view to_string(FitStepKind kind) {
  switch (kind) {
    case FitStepKind::kLayerByLayer:
      return "layer by layer";
    case FitStepKind::kMemoryOrder:
      return "memory-aware order";
    case FitStepKind::kInPlace:
      return "in-place rules";
    case FitStepKind::kFusedGates:
      return "fused gates";
    case FitStepKind::kPatches:
      return "patches";
    case FitStepKind::kNestedPatches:
      return "patches of patches";
    case FitStepKind::kSecondStage:
      return "second patched stage";
    case FitStepKind::kPooledPatches:
      return "patches through pools";
    case FitStepKind::kPooledSecondStage:
      return "second stage through pools";
  }
  return "?";
}

std::string_view to_string(FitPreference preference) {
  switch (preference) {
    case FitPreference::kCheapest:
      return "cheapest";
    case FitPreference::kPatches:
      return "patches";
    case FitPreference::kSpill:
      return "spill";
  }
  return "?";
}

std::optional<FitPreference> parse_fit_preference(std::string_view name) {
  for (FitPreference p : {FitPreference::kCheapest, FitPreference::kPatches, FitPreference::kSpill})
    if (to_string(p) == name) return p;
  return std::nullopt;
}

const FitStep& FitResult::best() const {
  for (auto it = steps.rbegin(); it != steps.rend(); ++it)
    if (it->kept) return *it;
  ML_CHECK(!steps.empty(), "a fit without steps");
  return steps.front();
}

FitResult fit_model(const Graph& graph, const DeviceProfile& profile, const FitOptions& options) {
  check_fit_input(profile, options);
  FitState state(graph, profile, options);
  for (const FitStrategy& strategy : fit_strategies()) {
    if ((state.done() && !strategy.forced) || !strategy.applies(state)) continue;
    const auto start = Clock::now();
    std::optional<FitAttempt> attempt = strategy.run(state);
    if (!attempt) continue;
    attempt->step.strategy = strategy.name;
    attempt->step.planning_seconds = seconds_since(start);
    record(state.result, std::move(*attempt), strategy.forced, options.prefer);
  }
  state.result.fits = state.result.plan.fits;
  state.result.prefer = options.prefer;
  return std::move(state.result);
}

MemoryPlan fit_arena_plan(const FitResult& fit, const DeviceProfile& profile, const PlacementOptions& placement) {
  DeviceProfile model_dtypes = profile;  // as exec's with_model_dtypes: the interpreter computes in them
  model_dtypes.storage.reset();
  return plan_memory(fit.graph, model_dtypes, fit.plan_options, placement);
}

std::vector<std::string> in_place_differences(const MemoryPlan& a, const MemoryPlan& b) {
  auto decisions = [](const MemoryPlan& p) {
    std::map<std::string, std::string> out;  // buffer → the buffer it is in place over, or ""
    for (const LiveBuffer& buffer : p.liveness.buffers)
      if (buffer.category != BufferCategory::kWorkspace)  // a kernel's own bytes: no decision to make
        out[buffer.name] = buffer.alias_of ? p.liveness.buffers[static_cast<size_t>(*buffer.alias_of)].name : "";
    return out;
  };
  const auto da = decisions(a), db = decisions(b);
  std::vector<std::string> differences;
  auto describe = [](const std::string& over) {
    return over.empty() ? std::string("own storage") : "in place over '" + over + "'";
  };
  for (const auto& [name, over] : da) {
    const auto it = db.find(name);
    if (it == db.end())
      differences.push_back(fmt::format("'{}': only in the first plan", name));
    else if (it->second != over)
      differences.push_back(
          fmt::format("'{}': {} in one, {} in the other", name, describe(over), describe(it->second)));
  }
  for (const auto& [name, over] : db)
    if (!da.count(name)) differences.push_back(fmt::format("'{}': only in the second plan", name));
  return differences;
}

PatchSpec parse_patch_spec(const Graph& graph, const std::string& text) {
  const size_t x = text.find('x'), at = text.find('@');
  auto number = [&](size_t begin, size_t end) {
    int v = 0;
    if (begin >= end || end - begin > 4) return -1;
    for (size_t i = begin; i < end; ++i) {
      if (text[i] < '0' || text[i] > '9') return -1;
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  const int rows = x == std::string::npos ? -1 : number(0, x);
  const int cols = x == std::string::npos || at == std::string::npos || at < x ? -1 : number(x + 1, at);
  if (rows < 1 || cols < 1 || at + 1 >= text.size())
    fail("'{}': expected ROWSxCOLS@VALUE, e.g. 4x4@input.44 (ROWS and COLS from 1 to 9999)", text);
  const std::string name = text.substr(at + 1);
  const ValueId id = find_value(graph, name);
  if (!id.valid()) fail("'{}': the model has no value '{}'", text, name);
  return {.split = id, .rows = rows, .cols = cols};
}

}  // namespace memledger
