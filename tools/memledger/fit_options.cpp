#include "fit_options.h"

#include "flag_errors.h"

namespace memledger::cli {

void add_fit_options(CLI::App* command, FitCliOptions& options) {
  command->add_option("--capacity", options.capacity,
                      "bytes the arena may take, instead of the device's capacity_bytes");
  command->add_option("--patch", options.patch,
                      "run this patch grid instead of searching one: ROWSxCOLS@VALUE, the stage ending in VALUE");
  command
      ->add_option("--inner-patch", options.inner_patch,
                   "with --patch, patches of patches: this grid inside each patch, over the part of its stage up to "
                   "VALUE (ROWSxCOLS@VALUE)")
      ->needs("--patch");
  command->add_option("--time-budget", options.time_budget, "seconds each exact placement may search")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--prefer", options.prefer,
                      "on a device with banks, which plan that fits wins: cheapest (extra MACs and slow-bank traffic "
                      "weighed in cycles; the default), patches (no slow-bank traffic wherever patches reach it) or "
                      "spill (slower banks before any extra MAC)");
}

DeviceProfile fit_profile(DeviceProfile profile, const FitCliOptions& options) {
  if (options.capacity) {
    if (*options.capacity < 0) fail("--capacity {}: expected a number of bytes > 0", *options.capacity);
    if (!profile.banks.empty())
      fail("--capacity: device '{}' has banks; each bank's capacity_bytes is in its profile", profile.name);
    profile.capacity_bytes = *options.capacity;
    profile.source += fmt::format(", capacity from --capacity");
  }
  return profile;
}

FitOptions fit_options(const Graph& graph, const DeviceProfile& profile, const FitCliOptions& options, bool all_steps) {
  FitOptions fit{.placement = {.time_budget_seconds = options.time_budget}, .all_steps = all_steps};
  if (!options.prefer.empty()) {
    if (profile.banks.empty())
      fail("--prefer {}: device '{}' is one arena; --prefer weighs spills to slower banks against patches",
           options.prefer, profile.name);
    const std::optional<FitPreference> prefer = parse_fit_preference(options.prefer);
    if (!prefer) fail("--prefer {}: expected cheapest, patches or spill", options.prefer);
    fit.prefer = *prefer;
  }
  if (!options.patch.empty()) fit.patch = parse_flag("--patch", [&] { return parse_patch_spec(graph, options.patch); });
  if (!options.inner_patch.empty())
    fit.inner_patch = parse_flag("--inner-patch", [&] { return parse_patch_spec(graph, options.inner_patch); });
  return fit;
}

FitResult run_fit(const Graph& graph, const DeviceProfile& profile, const FitCliOptions& options, bool all_steps) {
  return fit_model(graph, profile, fit_options(graph, profile, options, all_steps));
}

}  // namespace memledger::cli
