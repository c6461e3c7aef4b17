#include "memledger/plan/allocate/planner.h"

#include <chrono>
#include <iterator>

#include "memledger/core/error.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/naive.h"
#include "memledger/plan/allocate/validate.h"

namespace memledger::allocate {
namespace {

template <typename F>
PlannerRun timed(Algorithm algorithm, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  PlannerRun run{.algorithm = algorithm};
  f(run);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// The no-reuse baseline (naive.h); ignores what came before it.
class NaivePlanner final : public Planner {
 public:
  Algorithm algorithm() const override { return Algorithm::kNaive; }
  PlannerRun plan(const Problem& problem, const Solution*) const override {
    return timed(algorithm(), [&](PlannerRun& run) { run.solution = plan_naive(problem); });
  }
};

// The greedy portfolio (greedy.h); starts from nothing.
class GreedyPlanner final : public Planner {
 public:
  Algorithm algorithm() const override { return Algorithm::kGreedy; }
  PlannerRun plan(const Problem& problem, const Solution*) const override {
    return timed(algorithm(), [&](PlannerRun& run) { run.solution = plan_greedy(problem); });
  }
};

// The exact search (exact.h); improves on the best plan so far (greedy's when none).
class ExactPlanner final : public Planner {
 public:
  explicit ExactPlanner(ExactOptions options) : options_(std::move(options)) {}
  Algorithm algorithm() const override { return Algorithm::kExact; }
  PlannerRun plan(const Problem& problem, const Solution* best) const override {
    return timed(algorithm(), [&](PlannerRun& run) {
      ExactResult result = plan_exact(problem, options_, best);
      run.solution = std::move(result.solution);
      run.exact = std::move(result.stats);
    });
  }

 private:
  ExactOptions options_;
};

// The no-reuse baseline, the greedy portfolio from nothing, the exact search from greedy's plan.
constexpr AlgorithmInfo kAlgorithms[] = {
    {Algorithm::kNaive, "naive"}, {Algorithm::kGreedy, "greedy"}, {Algorithm::kExact, "exact"}};

}  // namespace

std::span<const AlgorithmInfo> algorithms() { return kAlgorithms; }

std::string algorithm_choices() {
  std::string text;
  for (size_t i = 0; i < std::size(kAlgorithms); ++i) {
    if (i > 0) text += i + 1 == std::size(kAlgorithms) ? " or " : ", ";
    text += kAlgorithms[i].name;
  }
  return text;
}

std::string to_string(Algorithm algorithm) {
  for (const AlgorithmInfo& a : kAlgorithms)
    if (a.algorithm == algorithm) return std::string(a.name);
  ML_CHECK(false, "unknown algorithm");
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (const AlgorithmInfo& a : kAlgorithms)
    if (a.name == name) return a.algorithm;
  return std::nullopt;
}

std::string to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kNoCapacity:
      return "no capacity";
    case Verdict::kFits:
      return "fits";
    case Verdict::kBelowLowerBound:
      return "below lower bound";
    case Verdict::kProvenInfeasible:
      return "proven infeasible";
    case Verdict::kNotFound:
      return "not found";
  }
  ML_CHECK(false, "unknown verdict");
}

std::unique_ptr<Planner> make_planner(Algorithm algorithm, const ExactOptions& exact_options) {
  switch (algorithm) {
    case Algorithm::kNaive:
      return std::make_unique<NaivePlanner>();
    case Algorithm::kGreedy:
      return std::make_unique<GreedyPlanner>();
    case Algorithm::kExact:
      return std::make_unique<ExactPlanner>(exact_options);
  }
  ML_CHECK(false, "unknown algorithm");
}

Allocation allocate(const Problem& problem, const AllocateOptions& options) {
  check_problem(problem);
  Allocation allocation;
  allocation.bound = lower_bound(problem);
  allocation.capacity = options.exact.capacity;
  allocation.proven_bound = allocation.bound.bytes;
  allocation.runs.reserve(std::size(kAlgorithms));  // `best` points into it
  const Solution* best = nullptr;
  for (const AlgorithmInfo& entry : kAlgorithms) {
    const Algorithm algorithm = entry.algorithm;
    allocation.runs.push_back(make_planner(algorithm, options.exact)->plan(problem, best));
    const PlannerRun& run = allocation.runs.back();
    const std::optional<std::string> violation = find_violation(problem, run.solution);
    ML_CHECK(!violation, "the {} plan is invalid: {}", run.solution.algorithm, violation.value_or(""));
    if (run.exact) allocation.proven_bound = std::max(allocation.proven_bound, run.exact->proven_bound);
    // A later planner wins ties (it is the one asked for).
    if (!best || run.solution.arena_bytes <= best->arena_bytes) best = &run.solution;
    if (algorithm == options.algorithm) break;
  }
  allocation.best = *best;
  if (allocation.best.arena_bytes <= allocation.proven_bound) allocation.best.optimal = true;
  if (const std::optional<int64_t> capacity = allocation.capacity) {
    if (*capacity < allocation.bound.bytes) {
      allocation.verdict = Verdict::kBelowLowerBound;
    } else if (allocation.best.arena_bytes <= *capacity) {
      allocation.verdict = Verdict::kFits;
    } else if (allocation.proven_bound > *capacity) {
      allocation.verdict = Verdict::kProvenInfeasible;
    } else {
      allocation.verdict = Verdict::kNotFound;
    }
  }
  return allocation;
}

Solution plan(const Problem& problem, Algorithm algorithm, const ExactOptions& exact_options) {
  return allocate(problem, {.algorithm = algorithm, .exact = exact_options}).best;
}

}  // namespace memledger::allocate
