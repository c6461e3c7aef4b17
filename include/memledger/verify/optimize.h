// The rewrite-and-prove step behind `memledger optimize`: a copy of the graph goes through
// the pass pipeline, then both graphs run on the same seeded inputs. The caller decides
// what to do with a failed verification (the CLI writes nothing and exits 4).
// The result is the graph as the exported file holds it (memledger operators lowered to
// standard ONNX, ir/affine.h), so that it is what is verified and planned: a report of
// the rewrite is a report of the file, and `plan` of that file agrees with it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "memledger/ir/graph.h"
#include "memledger/passes/pass_table.h"
#include "memledger/verify/verify.h"

namespace memledger {

struct OptimizeOptions {
  std::vector<std::string> passes;  // empty: default_pipeline()
  PassOptions pass_options;
  VerifyOptions verify;
  std::function<void(const std::string&)> dump;  // the text form after each pass
};

struct OptimizeResult {
  Graph graph;  // the rewritten graph, lowered as export writes it
  std::vector<PipelineStep> steps;
  Verification verification;
  int lowered = 0;  // memledger operators lowered to standard ONNX after the passes
};

OptimizeResult optimize_graph(const Graph& original, const OptimizeOptions& options = {});

}  // namespace memledger
