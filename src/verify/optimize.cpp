#include "memledger/verify/optimize.h"

#include <fmt/format.h>

#include <algorithm>

#include "memledger/exec/interpreter.h"
#include "memledger/ir/affine.h"
#include "memledger/ir/printer.h"

namespace memledger {

OptimizeResult optimize_graph(const Graph& original, const OptimizeOptions& options) {
  OptimizeResult result{.graph = original, .steps = {}, .verification = {}, .lowered = 0};
  const std::vector<std::string> passes = options.passes.empty() ? default_pipeline() : options.passes;
  PassOptions pass_options = options.pass_options;
  if (!pass_options.evaluate) pass_options.evaluate = evaluate_constant_node;  // fold-constants runs kernels
  result.steps = run_pipeline(result.graph, passes, pass_options, options.dump);
  // Verify and report what will be written, not an IR operator the file cannot hold.
  result.lowered = lower_affine(result.graph);
  if (result.lowered > 0 && options.dump)
    options.dump(
        fmt::format("// as written: {} Affine lowered to Mul + Add\n{}", result.lowered, print_graph(result.graph)));
  VerifyOptions verify = options.verify;
  // Approximation changes numbers by design: the tolerance is the one asked for.
  if (options.pass_options.approximate_tolerance > 0)
    verify.rtol = std::max(verify.rtol, options.pass_options.approximate_tolerance);
  result.verification = verify_rewrite(original, result.graph, verify);
  return result;
}

}  // namespace memledger
