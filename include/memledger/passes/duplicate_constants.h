// Makes every use of a constant equal in dtype, shape and bytes to an earlier one refer
// to the earlier one.
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

PassResult duplicate_constants(Graph& graph, const PassOptions& options = {});

}  // namespace memledger
