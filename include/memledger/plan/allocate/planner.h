// The placement algorithms behind one interface, as TFLite Micro's memory planners are:
// a Planner takes the problem and the best plan so far and returns a valid plan. A new
// algorithm is one entry in Algorithm, one row of algorithms() and one Planner class in
// planner.cpp (calling the algorithm's own file pair), plus its test; the command line
// lists its choices from algorithms().
//
// allocate() runs the planners as a sequence — the no-reuse baseline, the greedy portfolio
// started from nothing, the exact search started from greedy's plan — up to the algorithm
// asked for, checks every plan with the validator, and judges the result against a
// capacity when one is given. The command line only prints what it returns (and
// allocation_json.h serialises it).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/plan/allocate/exact.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

enum class Algorithm { kNaive, kGreedy, kExact };

// The registry: every algorithm by its name, in the order allocate() runs them.
struct AlgorithmInfo {
  Algorithm algorithm;
  std::string_view name;
};
std::span<const AlgorithmInfo> algorithms();
// The names as a sentence for help and error texts: "naive, greedy or exact".
std::string algorithm_choices();

std::string to_string(Algorithm algorithm);
std::optional<Algorithm> parse_algorithm(std::string_view name);

// One planner's turn in the sequence.
struct PlannerRun {
  Algorithm algorithm = Algorithm::kNaive;
  Solution solution;
  double seconds = 0;
  std::optional<ExactStats> exact;  // the exact search's statistics
};

class Planner {
 public:
  virtual ~Planner() = default;
  virtual Algorithm algorithm() const = 0;
  // `best` is the best valid plan of the planners before this one, or null for the first.
  // Keeps what it uses from `best` (a planner that starts from it); the result is valid.
  virtual PlannerRun plan(const Problem& problem, const Solution* best) const = 0;
};

std::unique_ptr<Planner> make_planner(Algorithm algorithm, const ExactOptions& exact_options = {});

struct AllocateOptions {
  Algorithm algorithm = Algorithm::kExact;  // the last planner of the sequence
  ExactOptions exact;                       // its `capacity` is the capacity judged against
};

// Where the plan stands against the capacity.
enum class Verdict {
  kNoCapacity,
  kFits,
  kBelowLowerBound,   // the capacity is below the lower bound: nothing can fit
  kProvenInfeasible,  // the search completed and no placement fits
  kNotFound,          // no placement found within the capacity; one may exist
};

struct Allocation {
  LowerBound bound;
  std::vector<PlannerRun> runs;  // in sequence order
  Solution best;                 // the last run's plan (validated)
  std::optional<int64_t> capacity;
  Verdict verdict = Verdict::kNoCapacity;
  // Every arena below this is proven impossible (the lower bound, or more when the exact
  // search refuted capacities above it).
  int64_t proven_bound = 0;
};

// Checks the problem (bad input is an Error naming the buffer), then runs the sequence.
Allocation allocate(const Problem& problem, const AllocateOptions& options);

// The best plan of the sequence up to `algorithm` (plan_memory's and the simulator's entry).
Solution plan(const Problem& problem, Algorithm algorithm, const ExactOptions& exact_options = {});

std::string to_string(Verdict verdict);

}  // namespace memledger::allocate
