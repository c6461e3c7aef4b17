#include "memledger/report/text_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "memledger/report/units.h"

namespace memledger {
namespace {

std::string alias_name(const MemoryPlan& plan, const LiveBuffer& b) {
  return b.alias_of ? plan.liveness.buffers[static_cast<size_t>(*b.alias_of)].name : "";
}

std::string bar(int64_t value, int64_t full, int width) {
  if (full <= 0) return "";
  const int filled = static_cast<int>(std::min<int64_t>(width, (value * width + full - 1) / full));
  return std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.');
}

}  // namespace

std::string category_table(const MemoryPlan& plan) {
  std::string out = fmt::format("  {:<12} {:>6} {:>14} {:>14}\n", "category", "count", "logical", "physical");
  for (const auto& [category, t] : plan.ledger.by_category)
    out += fmt::format("  {:<12} {:>6} {:>14} {:>14}\n", to_string(category), t.count, human_bytes(t.logical_bytes),
                       human_bytes(t.physical_bytes));
  out += fmt::format("  {:<12} {:>6} {:>14} {:>14}\n", "total", plan.liveness.buffers.size(),
                     human_bytes(plan.ledger.logical_bytes), human_bytes(plan.ledger.physical_bytes));
  return out;
}

std::string buffer_table(const MemoryPlan& plan) {
  size_t width = 6;
  for (const auto& b : plan.liveness.buffers) width = std::max(width, std::min<size_t>(b.name.size(), 40));
  std::string out = fmt::format("  {:<{}} {:<10} {:>12} {:>12} {:>9} {:>10}  {}\n", "buffer", width, "category",
                                "logical", "physical", "steps", "offset", "in place of");
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const auto& b = plan.liveness.buffers[i];
    out += fmt::format("  {:<{}} {:<10} {:>12} {:>12} {:>9} {:>10}  {}\n", b.name.substr(0, 40), width,
                       to_string(b.category), human_bytes(b.logical_bytes), human_bytes(b.physical_bytes),
                       fmt::format("{}–{}", b.first_step, b.last_step), plan.offsets[i], alias_name(plan, b));
  }
  return out;
}

std::string timeline_text(const MemoryPlan& plan, int max_rows) {
  const auto& steps = plan.ledger.timeline;
  const int64_t full = plan.capacity_bytes > 0 ? std::max(plan.capacity_bytes, plan.ledger.peak_live_bytes)
                                               : plan.ledger.peak_live_bytes;
  std::vector<char> show(steps.size(), steps.size() <= static_cast<size_t>(max_rows));
  if (!show.empty() && steps.size() > static_cast<size_t>(max_rows)) {
    // The ends and the neighbourhood of the peak.
    const int peak = plan.ledger.peak_step;
    const int keep = std::max(max_rows / 3, 1);
    for (int s = 0; s < static_cast<int>(steps.size()); ++s)
      show[static_cast<size_t>(s)] =
          s < keep || s >= static_cast<int>(steps.size()) - keep || std::abs(s - peak) < keep / 2 + 1;
  }
  std::string out = fmt::format("  {:>5}  {:<24} {:>12}  {}\n", "step", "node", "live", "live buffers");
  bool skipped = false;
  for (size_t s = 0; s < steps.size(); ++s) {
    if (!show[s]) {
      if (!skipped) out += "  ...\n";
      skipped = true;
      continue;
    }
    skipped = false;
    const auto& step = steps[s];
    std::vector<std::string> names;
    for (int b : step.live_buffers) {
      const auto& buffer = plan.liveness.buffers[static_cast<size_t>(b)];
      names.push_back(buffer.alias_of ? buffer.name + "→" + alias_name(plan, buffer) : buffer.name);
      if (names.size() == 6 && step.live_buffers.size() > 6) {
        names.push_back(fmt::format("+{}", step.live_buffers.size() - 6));
        break;
      }
    }
    out += fmt::format("  {:>5}  {:<24} {:>12}  {} {}{}\n", s, step.node_name.substr(0, 24),
                       human_bytes(step.live_bytes), bar(step.live_bytes, full, 20), fmt::join(names, " "),
                       static_cast<int>(s) == plan.ledger.peak_step ? "   ← peak" : "");
  }
  if (plan.capacity_bytes > 0) out += fmt::format("  (bars: share of {})\n", human_bytes(full));
  return out;
}

std::string peak_contributors(const MemoryPlan& plan, int count) {
  if (plan.ledger.timeline.empty()) return "";
  const auto& step = plan.ledger.timeline[static_cast<size_t>(plan.ledger.peak_step)];
  std::string out =
      fmt::format("  at step {} ({}), {} live:\n", step.step, step.node_name, human_bytes(step.live_bytes));
  int shown = 0;
  for (int b : step.live_buffers) {
    const auto& buffer = plan.liveness.buffers[static_cast<size_t>(b)];
    if (buffer.alias_of) continue;
    if (shown++ == count) break;
    out += fmt::format("    {:>12}  {:>5.1f}%  {} ({})\n", human_bytes(buffer.physical_bytes),
                       step.live_bytes
                           ? 100.0 * static_cast<double>(buffer.physical_bytes) / static_cast<double>(step.live_bytes)
                           : 0.0,
                       buffer.name, to_string(buffer.category));
  }
  return out;
}

std::string plan_verdict(const MemoryPlan& plan) {
  const std::string capacity = plan.capacity_bytes > 0 ? human_bytes(plan.capacity_bytes) : "unlimited";
  return fmt::format("peak-live {} ({} B), arena {} ({} B, {}, {}{}); capacity {}: {}",
                     human_bytes(plan.ledger.peak_live_bytes), plan.ledger.peak_live_bytes,
                     human_bytes(plan.arena_bytes), plan.arena_bytes, plan.algorithm,
                     plan.optimal ? "optimal" : "not proven optimal",
                     plan.arena_bytes > plan.ledger.peak_live_bytes
                         ? fmt::format(", fragmentation {} B", plan.arena_bytes - plan.ledger.peak_live_bytes)
                         : "",
                     capacity, plan.fits ? "fits" : "DOES NOT FIT");
}

std::string text_report(const MemoryPlan& plan, const TextReportOptions& options) {
  std::string out = "Ledger\n" + category_table(plan);
  if (options.buffers) out += "\nBuffers\n" + buffer_table(plan);
  out += "\nLive at once\n" + timeline_text(plan, options.max_timeline_rows);
  out += "\nBiggest at the peak\n" + peak_contributors(plan, options.contributors);
  out += "\n" + plan_verdict(plan) + "\n";
  return out;
}

}  // namespace memledger
