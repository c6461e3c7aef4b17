// The planner sequence behind allocate(): every planner behind one interface, each plan
// validated, the verdict against a capacity, and the JSON form of the result.
#include "memledger/plan/allocate/planner.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "memledger/core/error.h"
#include "memledger/plan/allocate/allocation_json.h"
#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::buffer;

// Three buffers in a chain; the lower bound 35 (step 2) is reachable, naive needs 45.
Problem chain() { return {{buffer("a", 0, 2, 10), buffer("b", 1, 3, 20), buffer("c", 2, 4, 15)}}; }

TEST(AllocatePlanner, EveryAlgorithmIsBehindTheInterface) {
  const Problem p = chain();
  for (const Algorithm a : {Algorithm::kNaive, Algorithm::kGreedy, Algorithm::kExact}) {
    const std::unique_ptr<Planner> planner = make_planner(a);
    EXPECT_EQ(planner->algorithm(), a);
    EXPECT_EQ(parse_algorithm(to_string(a)), a);
    const PlannerRun run = planner->plan(p, nullptr);
    testing::expect_valid_plan(p, run.solution);
    EXPECT_EQ(run.exact.has_value(), a == Algorithm::kExact);
  }
  EXPECT_FALSE(parse_algorithm("best").has_value());
}

TEST(AllocatePlanner, TheSequenceStopsAtTheAlgorithmAskedFor) {
  const Problem p = chain();
  const Allocation greedy = allocate(p, {.algorithm = Algorithm::kGreedy});
  ASSERT_EQ(greedy.runs.size(), 2u);
  EXPECT_EQ(greedy.runs[0].algorithm, Algorithm::kNaive);
  EXPECT_EQ(greedy.runs[0].solution.arena_bytes, 45);
  EXPECT_EQ(greedy.best.arena_bytes, 35);
  EXPECT_TRUE(greedy.best.optimal);
  EXPECT_EQ(greedy.verdict, Verdict::kNoCapacity);
  const Allocation exact = allocate(p, {.algorithm = Algorithm::kExact});
  ASSERT_EQ(exact.runs.size(), 3u);
  EXPECT_EQ(exact.best.arena_bytes, 35);
}

TEST(AllocatePlanner, VerdictsAgainstACapacity) {
  const Problem p = chain();
  EXPECT_EQ(allocate(p, {.exact = {.capacity = 35}}).verdict, Verdict::kFits);
  EXPECT_EQ(allocate(p, {.exact = {.capacity = 34}}).verdict, Verdict::kBelowLowerBound);
  EXPECT_EQ(allocate(p, {.algorithm = Algorithm::kNaive, .exact = {.capacity = 40}}).verdict, Verdict::kNotFound);
  int64_t peak = 0;
  const Problem out_of_reach = testing::random_chain_problem(5, 8, peak);  // tests/data/allocate/peak_out_of_reach.csv
  const Allocation a = allocate(out_of_reach, {.exact = {.time_budget_seconds = 30, .capacity = peak}});
  EXPECT_EQ(a.verdict, Verdict::kProvenInfeasible);
  EXPECT_GT(a.proven_bound, peak);
  testing::expect_valid_plan(out_of_reach, a.best);
}

TEST(AllocatePlanner, BadInputIsAnError) {
  const Problem p{{buffer("a", 2, 2, 10)}};
  EXPECT_THROW(allocate(p, {}), Error);
}

TEST(AllocatePlanner, JsonCarriesTheSearchStatistics) {
  int64_t peak = 0;
  const Problem p = testing::random_chain_problem(5, 8, peak);
  const Allocation a = allocate(p, {.exact = {.time_budget_seconds = 30, .capacity = peak}});
  const nlohmann::json doc = nlohmann::json::parse(allocation_json(p, a, "chains.csv"));
  EXPECT_EQ(doc["schema"], "memledger.allocate/1");
  EXPECT_EQ(doc["problem"]["source"], "chains.csv");
  EXPECT_EQ(doc["lower_bound"]["bytes"], peak);
  EXPECT_EQ(doc["capacity_bytes"], peak);
  EXPECT_EQ(doc["verdict"], "proven infeasible");
  EXPECT_EQ(doc["arena_bytes"], a.best.arena_bytes);
  ASSERT_EQ(doc["runs"].size(), 3u);
  const nlohmann::json& search = doc["runs"][2]["search"];
  EXPECT_EQ(search["nodes"], a.runs[2].exact->nodes);
  EXPECT_GE(search["nodes"].get<int64_t>(), 1);
  EXPECT_GE(search["probes"].get<int64_t>(), 1);
  EXPECT_TRUE(search.contains("restarts"));
  ASSERT_GE(search["best_over_time"].size(), 1u);
  EXPECT_EQ(search["best_over_time"][0]["arena_bytes"], a.runs[1].solution.arena_bytes);
  EXPECT_EQ(doc["proven_bound_bytes"], a.proven_bound);
}

}  // namespace
}  // namespace memledger::allocate
