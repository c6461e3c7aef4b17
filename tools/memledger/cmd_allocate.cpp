// `memledger allocate PROBLEM.csv`: places the buffers of a CSV problem into one arena and
// prints what allocate::allocate() found: the lower bound, each planner's arena, the exact
// search's statistics, and the verdict against --capacity (exit code 3 when it does not fit).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "exact_progress.h"
#include "memledger/core/error.h"
#include "memledger/core/output_file.h"
#include "memledger/plan/allocate/allocation_json.h"
#include "memledger/plan/allocate/csv.h"
#include "memledger/plan/allocate/planner.h"
#include "memledger/report/allocate_report.h"
#include "option_checks.h"

namespace memledger::cli {
namespace {

using namespace memledger::allocate;

struct AllocateOptions {
  std::string problem;
  std::optional<int64_t> capacity;
  double time_budget_seconds = 5.0;
  std::string output;
  std::string json;
  std::string algorithm = "exact";
};

void run_allocate(const AllocateOptions& o) {
  // Every output is declared before any work and written together at the end (core/output_file).
  OutputSet outputs;
  outputs.protect_input(o.problem);
  if (!o.output.empty()) outputs.declare(o.output, "-o");
  if (!o.json.empty()) outputs.declare(o.json, "--json");
  const Problem problem = read_problem_csv(o.problem);
  const std::optional<Algorithm> algorithm = parse_algorithm(o.algorithm);
  ML_CHECK(algorithm.has_value(), "CLI11 admitted algorithm '{}'", o.algorithm);

  allocate::AllocateOptions options{.algorithm = *algorithm,
                                    .exact = {.time_budget_seconds = o.time_budget_seconds, .capacity = o.capacity}};
  std::shared_ptr<Progress> progress;
  if (*algorithm == Algorithm::kExact)
    progress = exact_search_progress(o.time_budget_seconds, options.exact.on_progress);
  const Allocation a = allocate::allocate(problem, options);
  if (progress) progress->finish();

  fmt::print("{}", allocation_text(o.problem, problem, a));
  const LowerBound& bound = a.bound;
  if (!o.json.empty()) outputs.stage(o.json, allocation_json(problem, a, o.problem));
  switch (a.verdict) {
    case Verdict::kNoCapacity:
    case Verdict::kFits:
      break;
    case Verdict::kBelowLowerBound:
      throw Error(fmt::format("does not fit: the capacity of {} bytes is below the lower bound of {} bytes "
                              "(the buffers live at step {} alone need {} bytes); no placement can fit "
                              "(best arena {} bytes)",
                              *a.capacity, bound.bytes, bound.peak_step, bound.peak_live_bytes, a.best.arena_bytes),
                  ExitCode::kDoesNotFit);
    case Verdict::kProvenInfeasible:
      throw Error(fmt::format("does not fit: the plan needs {} bytes but the capacity is {} bytes (lower bound {} "
                              "bytes); proven infeasible: the search completed and no placement within {} bytes "
                              "exists{}",
                              a.best.arena_bytes, *a.capacity, bound.bytes, *a.capacity,
                              a.best.optimal ? "; this plan is optimal" : ""),
                  ExitCode::kDoesNotFit);
    case Verdict::kNotFound:
      throw Error(fmt::format("does not fit: the plan needs {} bytes but the capacity is {} bytes (lower bound {} "
                              "bytes); {}; a placement within the capacity may exist",
                              a.best.arena_bytes, *a.capacity, bound.bytes,
                              *algorithm == Algorithm::kExact ? "none found within the time budget"
                                                              : "the exact search was not run"),
                  ExitCode::kDoesNotFit);
  }
  if (!o.output.empty()) outputs.stage(o.output, format_solution_csv(problem, a.best));
  outputs.commit();
  if (!o.json.empty()) fmt::print("wrote        {}\n", o.json);
  if (!o.output.empty()) fmt::print("wrote        {}\n", o.output);
}

}  // namespace

void register_allocate(CLI::App& app, int& exit_code) {
  auto* command = app.add_subcommand("allocate",
                                     "place the buffers of a CSV problem (id,lower,upper,size[,offset]) "
                                     "into one arena: lower bound, greedy, exact search");
  auto options = std::make_shared<AllocateOptions>();
  command->add_option("problem", options->problem, "problem CSV: id,lower,upper,size[,offset], upper exclusive")
      ->required();
  command
      ->add_option("--capacity", options->capacity,
                   "bytes available: the search looks for a placement within them first; exit code 3 if none "
                   "is found")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50));
  command->add_option("--time-budget", options->time_budget_seconds, "seconds for the exact search")
      ->check(finite_non_negative())
      ->capture_default_str();
  command->add_option("-o,--output", options->output, "write the solution CSV (with offsets) here");
  command->add_option("--json", options->json, "write the figures and the search statistics as JSON here");
  std::vector<std::string> names;
  for (const allocate::AlgorithmInfo& a : allocate::algorithms()) names.emplace_back(a.name);
  command->add_option("--algorithm", options->algorithm, allocate::algorithm_choices() + " (exact starts from greedy)")
      ->check(CLI::IsMember(names))
      ->capture_default_str();
  command->callback([options, &exit_code] {
    run_allocate(*options);
    exit_code = static_cast<int>(ExitCode::kOk);
  });
}

}  // namespace memledger::cli
