// Stores each constant that repeats its values along some axes compact (extent 1 there)
// and lets the consumer's broadcasting do the rest. With options.expand_constants,
// consumers that do not broadcast get an Expand of the compact constant (only for
// constants of 4 KiB saved or more). Decided from the values, never from sizes.
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

PassResult compact_constants(Graph& graph, const PassOptions& options = {});

}  // namespace memledger
