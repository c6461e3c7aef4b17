// Removes nodes none of whose outputs is used by a live node or is a graph output.
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

PassResult dead_code(Graph& graph, const PassOptions& options = {});

}  // namespace memledger
