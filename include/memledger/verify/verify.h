// Verification of a rewrite: runs the original and the rewritten graph on the same seeded
// inputs with one kernel set (the fast one unless asked otherwise; the result names it)
// and compares every output. Passes never execute
// (DESIGN.md §2); this is where passes and the interpreter meet.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memledger/exec/compare.h"
#include "memledger/exec/kernel_set.h"
#include "memledger/ir/graph.h"

namespace memledger {

struct VerifyOptions {
  uint64_t seed = 1;
  // |after − before| ≤ atol + rtol·|before| elementwise, with atol = rtol·max|before| of
  // that output: rounding in a long sum scales with the output's magnitude, not with
  // each element's.
  double rtol = 1e-4;
  KernelSet kernels = KernelSet::kFast;  // both graphs run with this set
};

struct OutputCheck {
  std::string name;
  TensorDifference difference;
  bool ok = true;
};

struct Verification {
  std::vector<OutputCheck> outputs;
  bool ok = true;
  double max_abs = 0;  // over all outputs
  double max_rel = 0;
  KernelSet kernels = KernelSet::kFast;  // the set both graphs ran with
  // One line per output: "output 'y': max|diff| 0, max rel 0 (ok)".
  std::string describe() const;
};

// The one tolerance rule for outputs that should agree (optimize's verification, `run
// --compare`, the conformance tests against onnxruntime): output i of `actual` against
// `reference`, named `names[i]`. A NaN on one side only is a mismatch.
Verification compare_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& actual,
                             const std::vector<Tensor>& reference, double rtol);

// An Error when the two graphs' inputs or outputs do not correspond (count, dtype, shape).
Verification verify_rewrite(const Graph& before, const Graph& after, const VerifyOptions& options = {});

}  // namespace memledger
