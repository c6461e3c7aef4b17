// Removes an Expand or Tile whose consumers broadcast anyway: each consumer whose output
// shape stays the same reads the unexpanded tensor instead.
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

PassResult lazy_expand(Graph& graph, const PassOptions& options = {});

}  // namespace memledger
