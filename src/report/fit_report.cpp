#include "memledger/report/fit_report.h"
#include "core/json_text.h"

#include <fmt/format.h>

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
  out += fmt::format("  {:<26} {:>12} {:>12} {:>20} {:>10}  {}\n", "step", "peak-live", "arena", "extra MACs",
                     "planning", "");
  for (const FitStep& s : fit.steps) {
    out +=
        fmt::format("  {:<26} {:>12} {:>12} {:>20} {:>8.2f} s  {}{}\n", to_string(s.kind),
                    human_bytes(s.peak_live_bytes), human_bytes(s.arena_bytes), macs_text(s.extra_macs, fit.model_macs),
                    s.planning_seconds, s.kept ? "kept" : "not kept (no lower peak)", s.fits ? ", fits" : "");
    if (!s.detail.empty()) out += fmt::format("  {:<26} {}\n", "", s.detail);
  }
  out += "\n" + fit_verdict(fit, profile) + "\n";
  if (!fit.fits) out += "\nLive at the peak of the best plan\n" + peak_contributors(fit.plan, 10);
  return out;
}

std::string fit_report_json(const FitResult& fit, const DeviceProfile& profile, const std::string& model) {
  using nlohmann::json;
  json steps = json::array();
  for (const FitStep& s : fit.steps)
    steps.push_back({{"step", std::string(to_string(s.kind))},
                     {"detail", s.detail},
                     {"peak_live_bytes", s.peak_live_bytes},
                     {"arena_bytes", s.arena_bytes},
                     {"extra_macs", s.extra_macs},
                     {"planning_seconds", s.planning_seconds},
                     {"fits", s.fits},
                     {"kept", s.kept}});
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
