#include "memledger/verify/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "memledger/core/error.h"
#include "memledger/exec/interpreter.h"

namespace memledger {

std::string Verification::describe() const {
  std::string out;
  for (const OutputCheck& o : outputs)
    out += fmt::format("output '{}': {} ({})\n", o.name, o.difference.describe(), o.ok ? "ok" : "EXCEEDS TOLERANCE");
  return out;
}

Verification verify_rewrite(const Graph& before, const Graph& after, const VerifyOptions& options) {
  if (before.inputs().size() != after.inputs().size() || before.outputs().size() != after.outputs().size())
    fail("verification: the rewritten graph has {} inputs and {} outputs, the original {} and {}",
         after.inputs().size(), after.outputs().size(), before.inputs().size(), before.outputs().size());
  const std::vector<Tensor> inputs = random_inputs(before, options.seed);
  const RunOptions run{.provider = nullptr, .after_node = {}, .kernels = options.kernels};
  const std::vector<Tensor> reference = run_graph(before, inputs, run);
  const std::vector<Tensor> actual = run_graph(after, inputs, run);
  std::vector<std::string> names;
  for (ValueId id : before.outputs()) names.push_back(before.value(id).name);
  Verification v = compare_outputs(names, actual, reference, options.rtol);
  v.kernels = options.kernels;
  return v;
}

Verification compare_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& actual,
                             const std::vector<Tensor>& reference, double rtol) {
  if (names.size() != reference.size() || actual.size() != reference.size())
    fail("comparison: {} outputs against {} reference outputs", actual.size(), reference.size());
  Verification v;
  for (size_t i = 0; i < reference.size(); ++i) {
    double max_ref = 0;
    for (int64_t k = 0; k < reference[i].elements(); ++k)
      max_ref = std::max(max_ref, std::abs(reference[i].element_as_double(k)));
    const TensorDifference d = compare_tensors(actual[i], reference[i], rtol, rtol * max_ref);
    OutputCheck check{.name = names[i], .difference = d, .ok = d.same_shape && d.mismatches == 0};
    v.ok = v.ok && check.ok;
    v.max_abs = std::max(v.max_abs, d.max_abs);
    v.max_rel = std::max(v.max_rel, d.max_rel);
    v.outputs.push_back(std::move(check));
  }
  return v;
}

}  // namespace memledger
