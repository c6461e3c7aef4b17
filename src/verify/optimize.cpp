#include "memledger/verify/optimize.h"

#include <algorithm>

namespace memledger {

OptimizeResult optimize_graph(const Graph& original, const OptimizeOptions& options) {
  OptimizeResult result{.graph = original, .steps = {}, .verification = {}};
  const std::vector<std::string> passes = options.passes.empty() ? default_pipeline() : options.passes;
  result.steps = run_pipeline(result.graph, passes, options.pass_options, options.dump);
  VerifyOptions verify = options.verify;
  // Approximation changes numbers by design: the tolerance is the one asked for.
  if (options.pass_options.approximate_tolerance > 0)
    verify.rtol = std::max(verify.rtol, options.pass_options.approximate_tolerance);
  result.verification = verify_rewrite(original, result.graph, verify);
  return result;
}

}  // namespace memledger
