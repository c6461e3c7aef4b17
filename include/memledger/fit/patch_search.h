// fit's search for patch-based execution (fit/fit.h, steps 4 and 5): which split value and
// grid — or, one level deeper, which outer split and grid with an inner split and grid inside
// each outer patch (fit/patch.h's apply_nested_patches) — reaches the capacity with the
// fewest extra multiply-accumulates. Candidates are screened by peak-live (liveness and
// ledger, no placement); the first few that reach it are placed, the first whose arena fits
// wins. Both searches are deterministic (bounded by a count of evaluations, not by time), so
// `run --arena --fit` finds the plan `fit` found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "memledger/fit/fit.h"

namespace memledger {

struct PatchCandidate {
  PatchSpec spec;
  std::optional<PatchSpec> inner;  // patches of patches: the grid inside each of spec's patches
  int64_t peak_live_bytes = 0;
  int64_t stage_peak_bytes = 0;  // the most live at a step inside the patched stage
  int64_t extra_macs = 0;
};

struct PatchSearchResult {
  std::optional<PatchCandidate> chosen;  // reaching the capacity when `reaches`, else the lowest peak
  // When none reaches: of the candidates whose own stage stays within the capacity (the peak
  // is after it, where a later stage can take it), the lowest peak — a better start for a
  // second stage than `chosen` when `chosen`'s peak is inside its own stage.
  std::optional<PatchCandidate> opener;
  bool reaches = false;
  int reaching = 0;   // candidates whose peak-live reaches the capacity
  int evaluated = 0;  // candidates whose peak-live was computed
  int pruned = 0;     // outer stages skipped: the rest of the network alone exceeds the capacity
};

PatchedGraph apply_candidate(const Graph& base, const PatchCandidate& candidate);

// One grid over the stage ending in each split candidate (FitOptions::grids); with `after`,
// over the later stages starting at that value (PatchSpec::after).
PatchSearchResult search_patches(const Graph& base, const DeviceProfile& profile, const FitOptions& options,
                                 ValueId after = {});

// A later stage around the plan's peak step (fit's step 6), in a graph whose first stage ends
// at `first_split`: stages starting at a value computed in full between that split and the
// peak (nearest the peak first, at most kLaterStageStarts of them) and ending at a split at
// or after it, each over FitOptions::grids; bounded by FitOptions::nested_evaluations.
inline constexpr int kLaterStageStarts = 32;
PatchSearchResult search_later_stage(const Graph& base, const DeviceProfile& profile, const FitOptions& options,
                                     ValueId first_split, int peak_step);

// Patches of patches (FitOptions::nested_outer_grids × nested_inner_grids), bounded by
// FitOptions::nested_evaluations.
PatchSearchResult search_nested_patches(const Graph& base, const DeviceProfile& profile, const FitOptions& options);

std::string candidate_text(const PatchCandidate& candidate, const Graph& base);

}  // namespace memledger
