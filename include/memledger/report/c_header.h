// A plan a runtime can use (issue 13, item 6): the arena's size and alignment, every buffer's
// name, offset and size, and the schedule — node order, each step's input, output and
// workspace buffers, and for a patched stage the patch grid and each step's patch — as one
// self-contained C header (C99, <stdint.h> only), what `plan --emit-c` and `fit --emit-c`
// write. TFLite Micro users find arena sizes by trial; this is the offline plan instead.
#pragma once

#include <string>
#include <vector>

#include "memledger/device/profile.h"
#include "memledger/fit/fit.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {

// The patch structure of a schedule (fit/patch.h, after fit): per step of the plan's
// schedule, the patch (r·cols + c) it belongs to or -1; for patches of patches also the
// inner grid run inside each outer patch and each step's inner patch (or -1); for a second
// patched stage its grid and each step's patch of it (or -1); for pools inside the stages,
// their passes of row strips.
struct CHeaderPatches {
  int rows = 0, cols = 0;
  std::string split;  // the value the patched stage ends in
  std::vector<int> patch_of_step;
  int inner_rows = 0, inner_cols = 0;  // 0: no inner grid
  std::string inner_split;             // the value the inner stage ends in
  std::vector<int> inner_patch_of_step;
  int second_rows = 0, second_cols = 0;    // a second patched stage; 0: none
  std::string second_start, second_split;  // the values it starts at (in full) and ends in
  std::vector<int> second_patch_of_step;
  // Pool passes (squeeze-and-excitation pools inside the stages): per pass the pooled
  // value's name and its row strips; per step its pass and strip (-1 outside one).
  std::vector<std::string> pool_names;
  std::vector<int> pool_strips;
  std::vector<int> pool_pass_of_step, pool_strip_of_step;
};

// The patches of a fit's final plan, as the header describes them.
CHeaderPatches c_header_patches(const FitPatches& patches);

struct CHeaderOptions {
  // Prefix of every name the header defines: PREFIX_ARENA_BYTES, prefix_buffers, ...; a C
  // identifier (letters, digits, '_', not starting with a digit).
  std::string prefix = "ml";
  const CHeaderPatches* patches = nullptr;
};

// The header text; `model` names the model in its opening comment and include guard. An
// Error when the prefix is not a C identifier or a figure does not fit the header's
// int32_t fields.
std::string plan_c_header(const Graph& graph, const MemoryPlan& plan, const DeviceProfile& profile,
                          const std::string& model, const CHeaderOptions& options = {});

}  // namespace memledger
