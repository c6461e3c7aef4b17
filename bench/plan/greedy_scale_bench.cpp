// Greedy placement time for 10^3 .. 10^6 buffers: each heuristic alone and the portfolio
// that plan_greedy runs. The fitted complexity (Google Benchmark's BigO line) shows the
// n log n growth; `arena/lb` reports the quality on the same random problems.
#include <benchmark/benchmark.h>

#include <map>

#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/lower_bound.h"

namespace memledger::allocate {
namespace {

const Problem& problem_of(int64_t n) {
  static std::map<int64_t, Problem> cache;
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, generate_random_problem(42, n, 1 << 20)).first;
  return it->second;
}

void report(benchmark::State& state, const Problem& p, const Solution& s) {
  state.SetComplexityN(state.range(0));
  state.counters["arena/lb"] = static_cast<double>(s.arena_bytes) / static_cast<double>(lower_bound(p).bytes);
}

void BM_BottomUp(benchmark::State& state) {
  const Problem& p = problem_of(state.range(0));
  Solution s;
  for (auto _ : state) s = plan_greedy(p, {GreedyStrategy::kBottomUp, GreedyOrder::kSizeDesc});
  report(state, p, s);
}

void BM_SweepBestFit(benchmark::State& state) {
  const Problem& p = problem_of(state.range(0));
  Solution s;
  for (auto _ : state) s = plan_greedy(p, {GreedyStrategy::kSweepBestFit, GreedyOrder::kSizeDesc});
  report(state, p, s);
}

void BM_Portfolio(benchmark::State& state) {
  const Problem& p = problem_of(state.range(0));
  Solution s;
  for (auto _ : state) s = plan_greedy(p);
  report(state, p, s);
}

void BM_LowerBound(benchmark::State& state) {
  const Problem& p = problem_of(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(lower_bound(p));
  state.SetComplexityN(state.range(0));
}

#define SCALE(bm) \
  BENCHMARK(bm)->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond)->Complexity(benchmark::oNLogN)
SCALE(BM_BottomUp);
SCALE(BM_SweepBestFit);
SCALE(BM_Portfolio);
SCALE(BM_LowerBound);

}  // namespace
}  // namespace memledger::allocate

BENCHMARK_MAIN();
