// Fit's zero-cost rewrite (fit/fit.h): the self-gated activations exporters write as two
// nodes — SiLU as Mul(x, Sigmoid(x)), hard-swish as Mul(x, HardSigmoid(x)) — hold x and the
// gate's full buffer at once; memledger.SelfGated (ir/self_gated.h) computes the pair in one
// node, in place over x, with the same bits. No MACs change, only the buffers live at the gate.
#pragma once

#include "memledger/ir/graph.h"

namespace memledger {

struct FusedGates {
  Graph graph;
  int fused = 0;  // pairs replaced
};

// `graph` with every Mul(x, G(x)) or Mul(G(x), x) — G a gate SelfGated computes, of x's
// shape and float32, whose output only that Mul reads and is no graph output — replaced by
// SelfGated(x) in the Mul's place of the order (the Mul's output, name and value id kept).
FusedGates fuse_self_gated(const Graph& graph);

}  // namespace memledger
