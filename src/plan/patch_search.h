// fit's search for patch-based execution (plan/fit.h, steps 4 and 5): which split value and
// grid — or, one level deeper, which outer split and grid with an inner split and grid inside
// each outer patch (plan/patch.h's apply_nested_patches) — reaches the capacity with the
// fewest extra multiply-accumulates. Candidates are screened by peak-live (liveness and
// ledger, no placement); the first few that reach it are placed, the first whose arena fits
// wins. Both searches are deterministic (bounded by a count of evaluations, not by time), so
// `run --arena --fit` finds the plan `fit` found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "memledger/plan/fit.h"

namespace memledger {

struct PatchCandidate {
  PatchSpec spec;
  std::optional<PatchSpec> inner;  // patches of patches: the grid inside each of spec's patches
  int64_t peak_live_bytes = 0;
  int64_t extra_macs = 0;
};

struct PatchSearchResult {
  std::optional<PatchCandidate> chosen;  // reaching the capacity when `reaches`, else the lowest peak
  bool reaches = false;
  int reaching = 0;   // candidates whose peak-live reaches the capacity
  int evaluated = 0;  // candidates whose peak-live was computed
  int pruned = 0;     // outer stages skipped: the rest of the network alone exceeds the capacity
};

PatchedGraph apply_candidate(const Graph& base, const PatchCandidate& candidate);

// One grid over the stage ending in each split candidate (FitOptions::grids).
PatchSearchResult search_patches(const Graph& base, const DeviceProfile& profile, const FitOptions& options);

// Patches of patches (FitOptions::nested_outer_grids × nested_inner_grids), bounded by
// FitOptions::nested_evaluations.
PatchSearchResult search_nested_patches(const Graph& base, const DeviceProfile& profile, const FitOptions& options);

std::string candidate_text(const PatchCandidate& candidate, const Graph& base);

}  // namespace memledger
