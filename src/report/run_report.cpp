#include "memledger/report/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "memledger/core/text.h"
#include "memledger/report/arena_report.h"

namespace memledger {

std::string tensor_summary(const Tensor& t) {
  if (t.elements() == 0) return "empty";
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.elements(); ++i) {
    const double v = t.element_as_double(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  return fmt::format("min {:.6g}, max {:.6g}, mean {:.6g}", lo, hi, sum / static_cast<double>(t.elements()));
}

std::string latency_line(const std::string& what, const LatencyStats& s) {
  return fmt::format("{}: {} runs after a warm-up: median {:.3f} ms, min {:.3f}, max {:.3f}, mean {:.3f}\n", what,
                     s.runs, s.median_ms, s.min_ms, s.max_ms, s.mean_ms);
}

std::string model_run_text(const Graph& graph, const ModelRun& r, const ModelRunOptions& options,
                           const std::string& compare_path) {
  std::string out;
  const auto at = std::back_inserter(out);
  fmt::format_to(at, "ran {} nodes in {:.1f} ms (with preparation)\n", graph.order().size(), r.milliseconds);
  fmt::format_to(at, "kernels: {}\n", r.kernels);
  if (r.latency) out += latency_line("latency", *r.latency);
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const Value& v = graph.value(graph.outputs()[i]);
    fmt::format_to(at, "output '{}': {} {}: {}\n", escape_for_terminal(v.name), dtype_name(v.dtype),
                   shape_to_string(v.shape), tensor_summary(r.outputs[i]));
  }
  if (r.arena) {
    const ArenaCheck& a = *r.arena;
    if (a.schedule)
      fmt::format_to(at, "memory-aware order ({}{}): peak-live {} B against {} B in the model's order\n",
                     a.schedule->method, a.schedule->optimal ? ", optimal" : "", a.schedule->peak_live_bytes,
                     a.schedule->model_order_peak_bytes);
    out += arena_run_text(a.run, {.graph = &a.ran(),
                                  .plan = &a.plan,
                                  .given = &options.arena->device,
                                  .kernels = options.arena->exec.kernels,
                                  .milliseconds = a.milliseconds,
                                  .fit = a.fit ? &*a.fit : nullptr,
                                  .fit_arena = a.fit_arena ? &*a.fit_arena : nullptr,
                                  .compared_with = &a.compared_with});
  }
  if (r.arena_latency) out += latency_line("arena latency (planned offsets, no guards)", *r.arena_latency);
  if (r.comparison) {
    fmt::format_to(at, "compare with {} ({:.1f} ms), tolerance {:g}:\n", compare_path, r.compare_milliseconds,
                   options.tolerance);
    out += escape_for_terminal(r.comparison->describe(), true);
  }
  return out;
}

}  // namespace memledger
