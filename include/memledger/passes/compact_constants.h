// Stores each constant that repeats its values along some axes compact (extent 1 there)
// and lets the consumer's broadcasting do the rest; consumers that do not broadcast get
// an Expand of the compact constant. Decided from the values, never from sizes.
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

PassResult compact_constants(Graph& graph, const PassOptions& options = {});

}  // namespace memledger
