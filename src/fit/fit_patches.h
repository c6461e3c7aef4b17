// The fit's record of the patches in its plan (FitPatches, fit/fit.h): built from a patch
// candidate applied to a graph, and carried onto a second stage's graph. Values are named
// in the record, since patched graphs keep every name they were given.
#pragma once

#include <string>

#include "memledger/fit/fit.h"
#include "memledger/fit/patch_search.h"

namespace memledger {

// The record of a first-stage candidate applied to `base`.
FitPatches fit_patches_of(const Graph& base, const PatchCandidate& candidate, const PatchedGraph& patched);

// `first`'s patches with a second stage `second` applied to its graph: the first stage's
// patches carried by node onto the new order (its nodes keep their ids).
FitPatches with_second_stage(const Graph& first, const FitPatches& first_patches, const PatchCandidate& second,
                             const PatchedGraph& patched);

// The value called `name`, or an invalid id.
ValueId find_value(const Graph& g, const std::string& name);
// The value a fit's own record names: an internal error when the graph has none.
ValueId value_named(const Graph& g, const std::string& name);

}  // namespace memledger
