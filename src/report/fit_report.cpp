#include "memledger/report/fit_report.h"
#include "core/json_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "memledger/report/json_report.h"
#include "memledger/report/text_report.h"
#include "memledger/report/units.h"

namespace memledger {
namespace {

std::string macs_text(int64_t extra, int64_t model) {
  if (extra == 0) return "0";
  return fmt::format("{:+.1f} M ({:+.1f}%)", static_cast<double>(extra) / 1e6,
                     model > 0 ? 100.0 * static_cast<double>(extra) / static_cast<double>(model) : 0.0);
}

std::string cycles_text(double cycles) {
  if (cycles == 0) return "0";
  return cycles >= 1e6 ? fmt::format("{:.1f} M", cycles / 1e6) : fmt::format("{:.0f}", cycles);
}

// On a device with banks: each bank's arena against its capacity, and what the plan costs
// (extra MACs, slow-bank traffic) in the device's cycles.
std::string banked_verdict(const FitResult& fit, const FitStep& best, const std::string& from) {
  const BankedPlacement& banked = *fit.plan.banked;
  std::vector<std::string> banks;
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    const int64_t used = banked.solution.banks.at(k).solution.arena_bytes;
    if (used > 0)
      banks.push_back(fmt::format("{} {} of {}", banked.banks[k].name, human_bytes(used),
                                  human_bytes(banked.banks[k].capacity_bytes)));
  }
  const std::string cost = fmt::format("extra MACs {}, slow-bank traffic {} ({} cycles), {} cycles in all",
                                       macs_text(best.extra_macs, fit.model_macs), human_bytes(best.traffic_bytes),
                                       cycles_text(best.spill_cycles), cycles_text(best.cost_cycles));
  if (fit.fits)
    return fmt::format("fits across the banks after {}: {}; peak-live {}; {}", from, fmt::join(banks, ", "),
                       human_bytes(fit.plan.ledger.peak_live_bytes), cost);
  std::string out = fmt::format("DOES NOT FIT across the banks: the best reached ({}), peak-live {}", from,
                                human_bytes(fit.plan.ledger.peak_live_bytes));
  for (const std::string& overflow : banked.solution.overflows) out += "\n  " + overflow;
  return out;
}

}  // namespace

std::string fit_verdict(const FitResult& fit, const DeviceProfile& profile) {
  const FitStep& best = fit.best();
  std::string from(to_string(best.kind));
  if (fit.patches) {
    from += fmt::format(" ({}x{} up to '{}'", fit.patches->spec.rows, fit.patches->spec.cols, fit.patches->split);
    if (fit.patches->inner_spec)
      from += fmt::format(", in each {}x{} up to '{}'", fit.patches->inner_spec->rows, fit.patches->inner_spec->cols,
                          fit.patches->inner_split);
    if (fit.patches->second_spec)
      from += fmt::format("; then {}x{} from '{}' up to '{}'", fit.patches->second_spec->rows,
                          fit.patches->second_spec->cols, fit.patches->second_start, fit.patches->second_split);
    from += ")";
  }
  if (fit.plan.banked) return banked_verdict(fit, best, from);
  if (fit.fits)
    return fmt::format("fits: arena {} ({} B) within {} ({} B) after {}, peak-live {}, extra MACs {}",
                       human_bytes(fit.plan.arena_bytes), fit.plan.arena_bytes, human_bytes(profile.capacity_bytes),
                       profile.capacity_bytes, from, human_bytes(fit.plan.ledger.peak_live_bytes),
                       macs_text(best.extra_macs, fit.model_macs));
  return fmt::format("DOES NOT FIT: the best reached ({}) needs an arena of {} ({} B), {} B over the {} ({} B)", from,
                     human_bytes(fit.plan.arena_bytes), fit.plan.arena_bytes,
                     fit.plan.arena_bytes - profile.capacity_bytes, human_bytes(profile.capacity_bytes),
                     profile.capacity_bytes);
}

std::string fit_report_text(const FitResult& fit, const DeviceProfile& profile) {
  std::string out = fmt::format("model MACs: {:.1f} M\n\n", static_cast<double>(fit.model_macs) / 1e6);
  const bool banked = !profile.banks.empty();
  // With banks, what each step's plan moves through slower banks and its cost in cycles.
  const auto traffic = [&](const std::string& bytes, const std::string& cycles) {
    return banked ? fmt::format(" {:>12} {:>10}", bytes, cycles) : std::string();
  };
  out += fmt::format("  {:<26} {:>12} {:>12} {:>20}{} {:>10}  {}\n", "step", "peak-live", "arena", "extra MACs",
                     traffic("slow traffic", "cycles"), "planning", "");
  for (const FitStep& s : fit.steps) {
    const std::string_view dropped = !banked || !s.fits                    ? "not kept (no lower peak)"
                                     : fit.prefer == FitPreference::kSpill ? "not kept (spills preferred)"
                                     : fit.prefer == FitPreference::kPatches
                                         ? "not kept (patches preferred)"
                                         : "not kept (a plan of fewer cycles is kept)";
    out +=
        fmt::format("  {:<26} {:>12} {:>12} {:>20}{} {:>8.2f} s  {}{}\n", to_string(s.kind),
                    human_bytes(s.peak_live_bytes), human_bytes(s.arena_bytes), macs_text(s.extra_macs, fit.model_macs),
                    traffic(human_bytes(s.traffic_bytes), cycles_text(s.cost_cycles)), s.planning_seconds,
                    s.kept ? std::string_view("kept") : dropped, s.fits ? ", fits" : "");
    if (!s.detail.empty()) out += fmt::format("  {:<26} {}\n", "", s.detail);
  }
  out += "\n" + fit_verdict(fit, profile) + "\n";
  if (!fit.fits) out += "\nLive at the peak of the best plan\n" + peak_contributors(fit.plan, 10);
  return out;
}

std::string fit_report_json(const FitResult& fit, const DeviceProfile& profile, const std::string& model) {
  using nlohmann::json;
  json steps = json::array();
  for (const FitStep& s : fit.steps) {
    json step = {{"step", std::string(to_string(s.kind))},
                 {"detail", s.detail},
                 {"peak_live_bytes", s.peak_live_bytes},
                 {"arena_bytes", s.arena_bytes},
                 {"extra_macs", s.extra_macs},
                 {"planning_seconds", s.planning_seconds},
                 {"fits", s.fits},
                 {"kept", s.kept}};
    if (!profile.banks.empty()) {  // what the step moves through slower banks, and its cycles
      step["slow_traffic_bytes"] = s.traffic_bytes;
      step["spill_cycles"] = s.spill_cycles;
      step["cost_cycles"] = s.cost_cycles;
    }
    steps.push_back(std::move(step));
  }
  json patches = nullptr;
  if (fit.patches) {
    json inner = nullptr;
    if (fit.patches->inner_spec)
      inner = {{"rows", fit.patches->inner_spec->rows},
               {"cols", fit.patches->inner_spec->cols},
               {"split", fit.patches->inner_split},
               {"patch_of_step", fit.patches->inner_patch_of_step}};
    json second = nullptr;
    if (fit.patches->second_spec)
      second = {{"rows", fit.patches->second_spec->rows},
                {"cols", fit.patches->second_spec->cols},
                {"split", fit.patches->second_split},
                {"start", fit.patches->second_start},
                {"patch_of_step", fit.patches->second_patch_of_step}};
    json pools = json::array();
    for (size_t i = 0; i < fit.patches->pool_names.size(); ++i)
      pools.push_back({{"pooled", fit.patches->pool_names[i]}, {"strips", fit.patches->pool_strips.at(i)}});
    patches = {{"rows", fit.patches->spec.rows},
               {"cols", fit.patches->spec.cols},
               {"split", fit.patches->split},
               {"original_macs", fit.patches->original_macs},
               {"patched_macs", fit.patches->patched_macs},
               {"patch_of_step", fit.patches->patch_of_step},
               {"inner", inner},
               {"second", second},
               {"pool_passes", pools},
               {"pool_pass_of_step", fit.patches->pool_pass_of_step},
               {"pool_strip_of_step", fit.patches->pool_strip_of_step}};
  }
  json report = json::parse(plan_report_json(fit.graph, fit.plan, profile, model));
  report["fit"] = {{"fits", fit.fits},
                   {"model_macs", fit.model_macs},
                   {"in_place", fit.plan_options.in_place},
                   {"steps", steps},
                   {"patches", patches}};
  return json_text(report) + "\n";
}

}  // namespace memledger
