#include "memledger/report/allocate_report.h"

#include <fmt/format.h>

#include <iterator>

namespace memledger {
namespace {

std::string ratio(int64_t arena, int64_t bound) {
  return bound > 0 ? fmt::format("{:.3f}× lower bound", static_cast<double>(arena) / static_cast<double>(bound))
                   : std::string("lower bound 0");
}

}  // namespace

std::string planner_run_text(const allocate::Problem& problem, const allocate::PlannerRun& run, int64_t lower_bound) {
  std::string out;
  const auto at = std::back_inserter(out);
  const std::string name = allocate::to_string(run.algorithm);
  const int64_t arena = run.solution.arena_bytes;
  if (run.algorithm == allocate::Algorithm::kNaive) {
    fmt::format_to(at, "naive        {} bytes ({})\n", arena, ratio(arena, lower_bound));
    return out;
  }
  if (!run.exact) {
    fmt::format_to(at, "{:<12} {} bytes ({}), {}, {:.1f} ms\n", name, arena, ratio(arena, lower_bound),
                   run.solution.algorithm, run.seconds * 1000);
    return out;
  }
  const allocate::ExactStats& e = *run.exact;
  std::string how = run.solution.optimal ? "optimal"
                    : e.timed_out        ? "not proven optimal (time budget spent)"
                                         : "not proven optimal";
  if (!e.searched && !run.solution.optimal)
    how += allocate::has_fixed_offsets(problem) ? "; fixed offsets: no search" : "; too large to search";
  fmt::format_to(at, "{:<12} {} bytes ({}), {}, {:.1f} ms, {} nodes\n", name, arena, ratio(arena, lower_bound), how,
                 run.seconds * 1000, e.nodes);
  if (!e.searched) return out;
  std::string over_time;
  for (const allocate::ExactImprovement& i : e.best_over_time)
    over_time += fmt::format("{}{} B at {:.3f} s", over_time.empty() ? "" : ", ", i.arena_bytes, i.seconds);
  fmt::format_to(at, "search       {} nodes, {} restarts, {} capacities tried, proven bound {} bytes\n", e.nodes,
                 e.restarts, e.probes, e.proven_bound);
  fmt::format_to(at, "best arena   {}\n", over_time);
  return out;
}

std::string allocation_text(const std::string& source, const allocate::Problem& problem,
                            const allocate::Allocation& a) {
  std::string out;
  const auto at = std::back_inserter(out);
  const allocate::LowerBound& bound = a.bound;
  fmt::format_to(at, "problem      {}: {} buffers\n", source, problem.buffers.size());
  fmt::format_to(at, "lower bound  {} bytes (peak live {} bytes at step {})\n", bound.bytes, bound.peak_live_bytes,
                 bound.peak_step);
  for (const allocate::PlannerRun& run : a.runs) out += planner_run_text(problem, run, bound.bytes);
  fmt::format_to(at, "arena        {} bytes, {}\n", a.best.arena_bytes,
                 a.best.optimal ? "optimal" : "not proven optimal");
  if (a.capacity) fmt::format_to(at, "capacity     {} bytes: {}\n", *a.capacity, allocate::to_string(a.verdict));
  return out;
}

}  // namespace memledger
