// The options `fit` and `run --arena --fit` share, so that run recomputes exactly the plan
// fit found: the device's capacity (or --capacity), a forced --patch grid (and --inner-patch), the placement's
// time budget.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "memledger/device/profile.h"
#include "memledger/fit/fit.h"

namespace memledger::cli {

struct FitCliOptions {
  std::optional<int64_t> capacity;  // overrides the profile's capacity_bytes
  std::string patch;                // RxC@VALUE, or empty: search
  std::string inner_patch;          // RxC@VALUE inside each of patch's patches, or empty
  double time_budget = 2.0;
  std::string prefer;  // cheapest, patches or spill (devices with banks); empty: cheapest
};

void add_fit_options(CLI::App* command, FitCliOptions& options);

// The profile with --capacity applied.
DeviceProfile fit_profile(DeviceProfile profile, const FitCliOptions& options);

// The library's options from the flags (all_steps as given) for `profile` (fit_profile's).
FitOptions fit_options(const Graph& graph, const DeviceProfile& profile, const FitCliOptions& options, bool all_steps);
// fit_model with these options.
FitResult run_fit(const Graph& graph, const DeviceProfile& profile, const FitCliOptions& options, bool all_steps);

}  // namespace memledger::cli
