// The entries of fit's strategy table (fit/strategy.h): when each applies and how it runs.
// Private to the fit stage: src/fit/strategy.cpp lists them; order_strategies.cpp and
// patch_strategies.cpp define them.
#pragma once

#include <optional>

#include "memledger/fit/strategy.h"

namespace memledger {

// Steps 1–3: no MACs change (order_strategies.cpp); they apply whenever the plan does not fit yet.
std::optional<FitAttempt> run_layer_by_layer(FitState& state);
std::optional<FitAttempt> run_memory_order(FitState& state);
std::optional<FitAttempt> run_in_place(FitState& state);
std::optional<FitAttempt> run_fused_gates(FitState& state);

// Steps 4–7: stages patch by patch (patch_strategies.cpp).
bool forced_patches_apply(FitState& state);
std::optional<FitAttempt> run_forced_patches(FitState& state);
bool patches_apply(FitState& state);
std::optional<FitAttempt> run_patches(FitState& state);
bool nested_patches_apply(FitState& state);
std::optional<FitAttempt> run_nested_patches(FitState& state);
bool second_stage_applies(FitState& state);
std::optional<FitAttempt> run_second_stage(FitState& state);
bool pooled_patches_apply(FitState& state);
std::optional<FitAttempt> run_pooled_patches(FitState& state);
bool pooled_second_stage_applies(FitState& state);
std::optional<FitAttempt> run_pooled_second_stage(FitState& state);

}  // namespace memledger
