// What every rewriting pass returns and takes: a pass rewrites the graph in place and
// reports how many nodes it rewrote. Bytes saved are measured around the pass by the pass
// table (constant bytes reachable before minus after), so no pass can misreport them.
#pragma once

#include <cstdint>

namespace memledger {

struct PassOptions {
  // > 0: unit-coefficient also treats scales within this distance of 1 as 1 (inexact).
  double approximate_tolerance = 0;
  // compact-constants also stores a constant read by a non-broadcasting consumer compact,
  // behind an Expand. Off by default: the Expand's output and the compact constant are
  // live together at that consumer, so peak-live can rise (efficientnet_b0: +128 B) while
  // only the file shrinks.
  bool expand_constants = false;
};

struct PassResult {
  int nodes_rewritten = 0;
  int64_t bytes_saved = 0;  // constant bytes (host storage) no longer reachable
  bool changed() const { return nodes_rewritten != 0; }
};

}  // namespace memledger
