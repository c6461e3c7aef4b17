// Hard placement instances with a known optimum (generate_hard_instance: a capacity × time
// rectangle cut into 150-450 buffers). Reports, per cut style, the share solved to the
// optimum by plan_exact within 5 s of CPU time each (thread CPU clock, greedy included), and
// the greedy portfolio's arena / optimum (median, worst). DESIGN.md §8 asks for >= 90% within
// 5 s. CPU time, because the machine we measure on is shared: the search's deadline is wall
// time, so it is given --wall-factor times the budget (default 1; on a loaded machine make it
// the load's slowdown or more), and an instance counts as solved when plan_exact reached the
// optimum (it stops there: optimum = lower bound) within the budget of CPU time. The search's
// choices depend on node counts only, so the count is repeatable while the wall time covers
// the budget of CPU time.
//
//   placement_hard_bench [--quick] [--instances=N] [--budget=S] [--wall-factor=F] [--first-seed=K]
//                        [benchmark flags]
// --quick: 5 instances per style. Default: 20 per style, seeds 1000, 1001, ... (the exact
// search was tuned on these; another --first-seed checks it on instances it never saw).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "memledger/plan/allocate/exact.h"
#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/validate.h"

namespace memledger::allocate {
namespace {

int g_instances = 20;
uint64_t g_first_seed = 1000;
double g_budget_seconds = 5.0;  // CPU seconds per instance
double g_wall_factor = 1.0;     // the search may run this many times the budget in wall time

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

void BM_HardInstances(benchmark::State& state) {
  const CutStyle style = state.range(0) == 0 ? CutStyle::kBrick : CutStyle::kGuillotine;
  for (auto _ : state) {
    std::vector<double> greedy_ratio, exact_seconds;
    int solved = 0;
    for (int k = 0; k < g_instances; ++k) {
      const uint64_t seed = g_first_seed + static_cast<uint64_t>(k);
      const int64_t buffers = bench_sizes(k, g_instances).buffers;
      const HardInstance h = generate_hard_instance(seed, buffers, style);
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = thread_cpu_seconds();
      const Solution greedy = plan_greedy(h.problem);
      const ExactResult result =
          plan_exact(h.problem, {.time_budget_seconds = g_budget_seconds * g_wall_factor}, &greedy);
      const double seconds = thread_cpu_seconds() - cpu_start;
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const Solution& exact = result.solution;
      const ExactStats& stats = result.stats;
      if (find_violation(h.problem, exact) || find_violation(h.problem, greedy)) state.SkipWithError("invalid plan");
      const bool at_optimum = exact.arena_bytes == h.optimum && seconds <= g_budget_seconds;
      solved += at_optimum ? 1 : 0;
      greedy_ratio.push_back(static_cast<double>(greedy.arena_bytes) / static_cast<double>(h.optimum));
      exact_seconds.push_back(seconds);
      std::fprintf(stderr,
                   "  %s seed %llu: %lld buffers, greedy %.3f, exact %.3f in %.2f s CPU (%.2f s wall, %lld nodes)%s\n",
                   style == CutStyle::kBrick ? "brick" : "guillotine", static_cast<unsigned long long>(seed),
                   static_cast<long long>(buffers), greedy_ratio.back(),
                   static_cast<double>(exact.arena_bytes) / static_cast<double>(h.optimum), seconds, wall,
                   static_cast<long long>(stats.nodes), at_optimum ? "" : "  NOT SOLVED");
    }
    state.counters["instances"] = g_instances;
    state.counters["solved_share"] = static_cast<double>(solved) / g_instances;
    state.counters["greedy_median"] = quantile(greedy_ratio, 0.5);
    state.counters["greedy_worst"] = quantile(greedy_ratio, 1.0);
    state.counters["exact_s_median"] = quantile(exact_seconds, 0.5);
    state.counters["exact_s_max"] = quantile(exact_seconds, 1.0);
  }
}
BENCHMARK(BM_HardInstances)->Arg(0)->Arg(1)->ArgName("guillotine")->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace memledger::allocate

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      memledger::allocate::g_instances = 5;
    } else if (std::strncmp(argv[i], "--instances=", 12) == 0) {
      memledger::allocate::g_instances = std::max(1, std::atoi(argv[i] + 12));
    } else if (std::strncmp(argv[i], "--first-seed=", 13) == 0) {
      memledger::allocate::g_first_seed = std::strtoull(argv[i] + 13, nullptr, 10);
    } else if (std::strncmp(argv[i], "--budget=", 9) == 0) {
      memledger::allocate::g_budget_seconds = std::atof(argv[i] + 9);
    } else if (std::strncmp(argv[i], "--wall-factor=", 14) == 0) {
      memledger::allocate::g_wall_factor = std::max(1.0, std::atof(argv[i] + 14));
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_count = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_count, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
