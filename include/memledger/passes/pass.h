// What every rewriting pass returns and takes: a pass rewrites the graph in place and
// reports how many nodes it rewrote. Bytes saved are measured around the pass by the pass
// table (constant bytes reachable before minus after), so no pass can misreport them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/ir/graph.h"

namespace memledger {

struct PassOptions {
  // > 0: unit-coefficient also treats scales within this distance of 1 as 1 (inexact).
  double approximate_tolerance = 0;
  // compact-constants also stores a constant read by a non-broadcasting consumer compact,
  // behind an Expand. Off by default: the Expand's output and the compact constant are
  // live together at that consumer, so peak-live can rise (efficientnet_b0: +128 B) while
  // only the file shrinks.
  bool expand_constants = false;
  // fold-constants: computes a node whose inputs are all constants (its outputs in order),
  // or nothing when it cannot. The interpreter's kernels do it (exec/'s
  // evaluate_constant_node; optimize_graph sets it); unset, fold-constants only forwards
  // Identity-like nodes. Passes sit below exec/, so the evaluator comes from above.
  std::function<std::optional<std::vector<Tensor>>(const Graph&, const Node&)> evaluate;
};

struct PassResult {
  int nodes_rewritten = 0;
  int64_t bytes_saved = 0;  // constant bytes (host storage) no longer reachable
  bool changed() const { return nodes_rewritten != 0; }
};

}  // namespace memledger
