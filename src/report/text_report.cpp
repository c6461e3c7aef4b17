#include "memledger/report/text_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "memledger/report/bank_report.h"
#include "memledger/report/units.h"
#include "names.h"

namespace memledger {
namespace {

using report::glyphs;
using report::shorten;

std::string alias_name(const MemoryPlan& plan, const LiveBuffer& b) {
  return b.alias_of ? plan.liveness.buffers[static_cast<size_t>(*b.alias_of)].name : "";
}

// Rows padded to columns end in spaces when the last column is empty.
std::string trim_right(std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

// Bytes of storage each category holds at the peak step (aliases counted once).
const std::map<BufferCategory, int64_t>& live_at_peak(const Ledger& ledger) {
  static const std::map<BufferCategory, int64_t> none;
  return ledger.timeline.empty() ? none : ledger.timeline[static_cast<size_t>(ledger.peak_step)].live_by_category;
}

constexpr size_t kNameWidth = 40;

std::string share(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "–";
}

std::string bar(int64_t value, int64_t full, int width) {
  if (full <= 0) return "";
  const int filled = static_cast<int>(std::min<int64_t>(width, (value * width + full - 1) / full));
  return std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.');
}

}  // namespace

std::string category_table(const MemoryPlan& plan) {
  const auto& at_peak = live_at_peak(plan.ledger);
  // The "external" column (bytes outside the arena) only where some buffer is.
  const bool external = plan.ledger.external_bytes > 0;
  auto row = [&](std::string_view name, size_t count, int64_t logical, int64_t physical, int64_t outside,
                 int64_t peak) {
    return fmt::format("  {:<12} {:>6} {:>12} {:>12} {}{:>12}\n", name, count, human_bytes(logical),
                       human_bytes(physical), external ? fmt::format("{:>12} ", human_bytes(outside)) : "",
                       human_bytes(peak));
  };
  std::string out = fmt::format("  {:<12} {:>6} {:>12} {:>12} {}{:>12}\n", "category", "count", "logical", "physical",
                                external ? fmt::format("{:>12} ", "external") : "", "at the peak");
  for (const auto& [category, t] : plan.ledger.by_category) {
    const auto peak = at_peak.find(category);
    out += row(to_string(category), static_cast<size_t>(t.count), t.logical_bytes, t.physical_bytes, t.external_bytes,
               peak == at_peak.end() ? 0 : peak->second);
  }
  out += row("total", plan.liveness.buffers.size(), plan.ledger.logical_bytes, plan.ledger.physical_bytes,
             plan.ledger.external_bytes, plan.ledger.peak_live_bytes);
  return out;
}

std::string buffer_table(const MemoryPlan& plan) {
  size_t width = 6;
  for (const auto& b : plan.liveness.buffers) width = std::max(width, glyphs(shorten(b.name, kNameWidth)));
  std::string out = trim_right(fmt::format("  {:<{}} {:<10} {:>12} {:>12} {:>9} {:>10}  {}", "buffer", width,
                                           "category", "logical", "physical", "steps", "offset", "in place of"));
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const auto& b = plan.liveness.buffers[i];
    out += trim_right(fmt::format("  {:<{}} {:<10} {:>12} {:>12} {:>9} {:>10}  {}", shorten(b.name, kNameWidth), width,
                                  to_string(b.category), human_bytes(b.logical_bytes), human_bytes(b.physical_bytes),
                                  fmt::format("{}–{}", b.first_step, b.last_step), buffer_location(plan, i),
                                  shorten(alias_name(plan, b), kNameWidth)));
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
  // The live set swept through the steps from the timeline's starts and ends, largest
  // first (ties in buffer order): O((buffers + rows) log buffers), not steps × live.
  const auto& buffers = plan.liveness.buffers;
  std::set<std::pair<int64_t, int>> live;  // (−physical bytes, index)
  const auto key = [&](int b) { return std::pair{-buffers[static_cast<size_t>(b)].physical_bytes, b}; };
  bool skipped = false;
  for (size_t s = 0; s < steps.size(); ++s) {
    const auto& step = steps[s];
    if (s > 0)
      for (int b : steps[s - 1].ends) live.erase(key(b));
    for (int b : step.starts) live.insert(key(b));
    if (!show[s]) {
      if (!skipped) out += "  ...\n";
      skipped = true;
      continue;
    }
    skipped = false;
    std::vector<std::string> names;
    for (const auto& [bytes, b] : live) {
      const auto& buffer = buffers[static_cast<size_t>(b)];
      names.push_back(buffer.alias_of ? shorten(buffer.name, 24) + "→" + shorten(alias_name(plan, buffer), 24)
                                      : shorten(buffer.name, 24));
      if (names.size() == 6 && live.size() > 6) {
        names.push_back(fmt::format("+{}", live.size() - 6));
        break;
      }
    }
    out += fmt::format("  {:>5}  {:<24} {:>12}  {} {}{}\n", s, shorten(step.node_name, 24),
                       human_bytes(step.live_bytes), bar(step.live_bytes, full, 20), fmt::join(names, " "),
                       static_cast<int>(s) == plan.ledger.peak_step ? "   ← peak" : "");
  }
  if (plan.capacity_bytes > 0) out += fmt::format("  (bars: share of {})\n", human_bytes(full));
  return out;
}

std::string peak_contributors(const MemoryPlan& plan, int count) {
  if (plan.ledger.timeline.empty()) return "";
  const auto& step = plan.ledger.timeline[static_cast<size_t>(plan.ledger.peak_step)];
  std::string out = fmt::format("  at step {} ({}), {} live in {} buffers:\n", step.step, step.node_name,
                                human_bytes(step.live_bytes), step.live_count);
  int shown = 0;
  int64_t rest = 0;
  int rest_count = 0;
  for (int b : live_buffers_at(plan.liveness, step.step)) {
    const auto& buffer = plan.liveness.buffers[static_cast<size_t>(b)];
    if (buffer.alias_of) continue;
    if (shown == count) {
      rest += buffer.physical_bytes;
      ++rest_count;
      continue;
    }
    ++shown;
    out += fmt::format("    {:>12}  {:>6}  {:<10}  {}\n", human_bytes(buffer.physical_bytes),
                       share(buffer.physical_bytes, step.live_bytes), to_string(buffer.category),
                       shorten(buffer.name, 60));
  }
  if (rest_count > 0)
    out += fmt::format("    {:>12}  {:>6}  {} more\n", human_bytes(rest), share(rest, step.live_bytes), rest_count);
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
                     capacity, plan.fits ? "fits" : "DOES NOT FIT") +
         (plan.persistent_bytes > 0
              ? fmt::format("\n  of which non-persistent head {} B, persistent tail {} B (variables, live for the "
                            "whole program; TFLite Micro counts them apart)",
                            plan.head_bytes, plan.persistent_bytes)
              : "");
}

std::string peak_inputs_line(const Ledger& ledger) {
  return fmt::format("peak-live {} the graph inputs ({}): {} ({} B) with them, {} ({} B) without",
                     ledger.inputs_in_arena ? "counts" : "leaves out",
                     ledger.inputs_in_arena ? "they are in the arena" : "they are outside the arena",
                     human_bytes(ledger.peak_live_with_inputs_bytes), ledger.peak_live_with_inputs_bytes,
                     human_bytes(ledger.peak_live_without_inputs_bytes), ledger.peak_live_without_inputs_bytes);
}

std::string schedule_line(const ScheduleResult* schedule) {
  if (!schedule) return "order: the model's own (a memory-aware order was not searched: --schedule memory)";
  const ScheduleResult& s = *schedule;
  const std::string search =
      fmt::format("{}{}, {:.2f} s, {} sets", s.method, s.optimal ? ", optimal" : "", s.seconds, s.states);
  if (s.peak_live_bytes >= s.model_order_peak_bytes)
    return fmt::format("order: the model's own, kept: {} a lower peak-live than its {} ({} B) ({})",
                       s.optimal ? "no order has" : "the memory-aware search found no order with",
                       human_bytes(s.model_order_peak_bytes), s.model_order_peak_bytes, search);
  return fmt::format(
      "order: memory-aware ({}): peak-live {} ({} B) against {} ({} B) in the model's order, {:.2f}x lower", search,
      human_bytes(s.peak_live_bytes), s.peak_live_bytes, human_bytes(s.model_order_peak_bytes),
      s.model_order_peak_bytes,
      static_cast<double>(s.model_order_peak_bytes) / static_cast<double>(std::max<int64_t>(s.peak_live_bytes, 1)));
}

std::string text_report(const MemoryPlan& plan, const TextReportOptions& options) {
  std::string out = "Ledger\n" + category_table(plan);
  if (options.buffers) out += "\nBuffers\n" + buffer_table(plan);
  out += "\nLive at once\n" + timeline_text(plan, options.max_timeline_rows);
  out += "\nBiggest at the peak\n" + peak_contributors(plan, options.contributors);
  if (plan.banked) out += "\nBanks\n" + bank_ledger_text(plan);
  out +=
      "\n" + plan_verdict(plan) + "\n" + peak_inputs_line(plan.ledger) + "\n" + schedule_line(options.schedule) + "\n";
  return out;
}

}  // namespace memledger
