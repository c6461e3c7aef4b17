#include "memledger/report/bank_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "memledger/report/units.h"

namespace memledger {

std::string buffer_location(const MemoryPlan& plan, size_t i) {
  const LiveBuffer& b = plan.liveness.buffers[i];
  if (!plan.banked) return b.external ? std::string("external") : std::to_string(plan.offsets[i]);
  const int bank = plan.banked->bank_of[i];
  if (bank < 0) return "external";
  return fmt::format("{}:{}", plan.banked->banks[static_cast<size_t>(bank)].name, plan.offsets[i]);
}

std::string bank_ledger_text(const MemoryPlan& plan) {
  if (!plan.banked) return "";
  const BankedPlacement& banked = *plan.banked;
  const allocate::BankedSolution& s = banked.solution;
  std::string out =
      fmt::format("  {:<12} {:>12} {:>5} {:>8} {:>12} {:>12} {:>12} {:>12} {:>14}  {}\n", "bank", "capacity", "cost",
                  "buffers", "bytes", "peak-live", "arena", "accessed", "traffic", "verdict");
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    const MemoryBank& bank = banked.banks[k];
    const allocate::BankUse& use = s.banks[k];
    int64_t bytes = 0;
    for (const auto& b : use.problem.buffers) bytes += b.size;
    out += fmt::format("  {:<12} {:>12} {:>5g} {:>8} {:>12} {:>12} {:>12} {:>12} {:>14.0f}  {}\n", bank.name,
                       human_bytes(bank.capacity_bytes), bank.access_cost, use.problem.buffers.size(),
                       human_bytes(bytes), human_bytes(use.lower_bound_bytes), human_bytes(use.solution.arena_bytes),
                       human_bytes(use.accessed_bytes), use.traffic_cost, use.fits ? "fits" : "DOES NOT FIT");
  }
  out += fmt::format("traffic {:.0f} (accessed bytes x access cost), lower bound {:.0f}{}; banks chosen by {}{}\n",
                     s.traffic_cost, s.lower_bound_cost,
                     // The bound holds for assignments that fit; an overflowing plan may cost less.
                     s.fits && s.lower_bound_cost > 0 ? fmt::format(" ({:.3f}x)", s.traffic_cost / s.lower_bound_cost)
                                                      : std::string(s.fits ? "" : " (for a plan that fits)"),
                     s.method, s.assignment_optimal ? ", optimal" : "");
  for (const std::string& overflow : s.overflows) out += overflow + "\n";
  return out;
}

void add_banks_json(nlohmann::json& report, const MemoryPlan& plan) {
  using nlohmann::json;
  if (!plan.banked) return;
  const BankedPlacement& banked = *plan.banked;
  const allocate::BankedSolution& s = banked.solution;
  json banks = json::array();
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    const MemoryBank& bank = banked.banks[k];
    const allocate::BankUse& use = s.banks[k];
    int64_t bytes = 0;
    for (const auto& b : use.problem.buffers) bytes += b.size;
    banks.push_back({{"name", bank.name},
                     {"capacity_bytes", bank.capacity_bytes},
                     {"alignment_bytes", bank.alignment_bytes},
                     {"access_cost", bank.access_cost},
                     {"holds", holds_to_string(bank.holds)},
                     {"read_only", bank.read_only},
                     {"buffer_count", use.problem.buffers.size()},
                     {"bytes", bytes},
                     {"peak_live_bytes", use.lower_bound_bytes},
                     {"arena_bytes", use.solution.arena_bytes},
                     {"algorithm", use.solution.algorithm},
                     {"accessed_bytes", use.accessed_bytes},
                     {"traffic_cost", use.traffic_cost},
                     {"fits", use.fits}});
  }
  report["banks"] = {{"method", s.method},
                     {"traffic_cost", s.traffic_cost},
                     {"lower_bound_traffic_cost", s.lower_bound_cost},
                     {"optimal", s.assignment_optimal},
                     {"fits", s.fits},
                     {"overflows", s.overflows},
                     {"banks", banks}};
  json& buffers = report["buffers"];
  for (size_t i = 0; i < buffers.size() && i < banked.bank_of.size(); ++i) {
    const int bank = banked.bank_of[i];
    buffers[i]["bank"] = bank < 0 ? json() : json(banked.banks[static_cast<size_t>(bank)].name);
    if (bank >= 0) buffers[i]["offset"] = plan.offsets[i];  // an in-place constant in flash has one
  }
}

}  // namespace memledger
