#include "memledger/plan/allocate/planner.h"

#include "memledger/core/error.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/naive.h"

namespace memledger::allocate {

std::string to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kNaive:
      return "naive";
    case Algorithm::kGreedy:
      return "greedy";
    case Algorithm::kExact:
      return "exact";
  }
  ML_CHECK(false, "unknown algorithm");
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (const Algorithm a : {Algorithm::kNaive, Algorithm::kGreedy, Algorithm::kExact}) {
    if (to_string(a) == name) return a;
  }
  return std::nullopt;
}

Solution plan(const Problem& problem, Algorithm algorithm, const ExactOptions& exact_options) {
  check_problem(problem);
  switch (algorithm) {
    case Algorithm::kNaive:
      return plan_naive(problem);
    case Algorithm::kGreedy:
      return plan_greedy(problem);
    case Algorithm::kExact:
      return plan_exact(problem, exact_options);
  }
  ML_CHECK(false, "unknown algorithm");
}

}  // namespace memledger::allocate
