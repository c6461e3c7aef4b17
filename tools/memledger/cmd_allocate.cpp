// `memledger allocate PROBLEM.csv`: places the buffers of a CSV problem into one arena and
// reports the lower bound, the greedy and exact arenas, and whether the result is optimal.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include "commands.h"
#include "exact_progress.h"
#include "memledger/core/error.h"
#include "memledger/plan/allocate/csv.h"
#include "memledger/plan/allocate/exact.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "memledger/plan/allocate/naive.h"
#include "memledger/plan/allocate/planner.h"
#include "memledger/plan/allocate/validate.h"

namespace memledger::cli {
namespace {

namespace fs = std::filesystem;
using namespace memledger::allocate;

struct AllocateOptions {
  std::string problem;
  std::optional<int64_t> capacity;
  double time_budget_seconds = 5.0;
  std::string output;
  std::string algorithm = "exact";
};

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

template <typename F>
auto timed(F&& f, double& milliseconds) {
  const auto start = std::chrono::steady_clock::now();
  auto result = f();
  milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string ratio(int64_t arena, int64_t bound) {
  return bound > 0 ? fmt::format("{:.3f}× lower bound", static_cast<double>(arena) / static_cast<double>(bound))
                   : std::string("lower bound 0");
}

void run_allocate(const AllocateOptions& o) {
  if (!o.output.empty() && same_file(o.output, o.problem)) {
    fail("refusing to write the solution over the input file {} (choose another -o)", o.problem);
  }
  if (o.capacity && *o.capacity < 0) fail("--capacity {} is negative", *o.capacity);
  const Problem problem = read_problem_csv(o.problem);
  const std::optional<Algorithm> algorithm = parse_algorithm(o.algorithm);
  ML_CHECK(algorithm.has_value(), "CLI11 admitted algorithm '{}'", o.algorithm);

  const LowerBound bound = lower_bound(problem);
  fmt::print("problem      {}: {} buffers\n", o.problem, problem.buffers.size());
  fmt::print("lower bound  {} bytes (peak live {} bytes at step {})\n", bound.bytes, bound.peak_live_bytes,
             bound.peak_step);
  if (o.capacity && *o.capacity < bound.bytes) {
    throw Error(fmt::format("does not fit: the capacity of {} bytes is below the lower bound of {} bytes "
                            "(the buffers live at step {} alone need {} bytes); no placement can fit",
                            *o.capacity, bound.bytes, bound.peak_step, bound.peak_live_bytes),
                ExitCode::kDoesNotFit);
  }

  double ms = 0;
  const Solution naive = timed([&] { return plan_naive(problem); }, ms);
  fmt::print("naive        {} bytes ({})\n", naive.arena_bytes, ratio(naive.arena_bytes, bound.bytes));
  Solution result = naive;
  if (*algorithm != Algorithm::kNaive) {
    result = timed([&] { return plan_greedy(problem); }, ms);
    fmt::print("greedy       {} bytes ({}), {}, {:.1f} ms\n", result.arena_bytes,
               ratio(result.arena_bytes, bound.bytes), result.algorithm, ms);
  }
  if (*algorithm == Algorithm::kExact) {
    ExactStats stats;
    const Solution greedy = result;
    ExactOptions options{.time_budget_seconds = o.time_budget_seconds};
    const auto progress = exact_search_progress(o.time_budget_seconds, options.on_progress);
    result = timed([&] { return plan_exact(problem, options, &greedy, &stats); }, ms);
    progress->finish();
    std::string how = result.optimal    ? "optimal"
                      : stats.timed_out ? "not proven optimal (time budget spent)"
                                        : "not proven optimal";
    if (!stats.searched && !result.optimal)
      how += has_fixed_offsets(problem) ? "; fixed offsets: no search" : "; too large to search";
    fmt::print("exact        {} bytes ({}), {}, {:.1f} ms, {} nodes\n", result.arena_bytes,
               ratio(result.arena_bytes, bound.bytes), how, ms, stats.nodes);
  }
  if (const std::optional<std::string> violation = find_violation(problem, result)) {
    ML_CHECK(false, "the {} plan is invalid: {}", result.algorithm, *violation);
  }
  fmt::print("arena        {} bytes, {}\n", result.arena_bytes, result.optimal ? "optimal" : "not proven optimal");
  if (o.capacity && result.arena_bytes > *o.capacity) {
    throw Error(
        fmt::format("does not fit: the plan needs {} bytes but the capacity is {} bytes (lower bound {} bytes{})",
                    result.arena_bytes, *o.capacity, bound.bytes,
                    result.optimal ? "; this plan is optimal" : "; a better plan may exist"),
        ExitCode::kDoesNotFit);
  }
  if (!o.output.empty()) {
    write_solution_csv(o.output, problem, result);
    fmt::print("wrote        {}\n", o.output);
  }
}

}  // namespace

void register_allocate(CLI::App& app, int& exit_code) {
  auto* command = app.add_subcommand("allocate",
                                     "place the buffers of a CSV problem (id,lower,upper,size[,offset]) "
                                     "into one arena: lower bound, greedy, exact search");
  auto options = std::make_shared<AllocateOptions>();
  command->add_option("problem", options->problem, "problem CSV: id,lower,upper,size[,offset], upper exclusive")
      ->required();
  command->add_option("--capacity", options->capacity, "bytes available; exit code 3 if the plan needs more");
  command->add_option("--time-budget", options->time_budget_seconds, "seconds for the exact search")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("-o,--output", options->output, "write the solution CSV (with offsets) here");
  command->add_option("--algorithm", options->algorithm, "naive, greedy or exact (exact starts from greedy)")
      ->check(CLI::IsMember({"naive", "greedy", "exact"}))
      ->capture_default_str();
  command->callback([options, &exit_code] {
    run_allocate(*options);
    exit_code = static_cast<int>(ExitCode::kOk);
  });
}

}  // namespace memledger::cli
