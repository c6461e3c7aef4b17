// A Conv with group = g over an input repeated g times along channels (Tile, Concat of
// one value g times, or Reshape(Expand(Unsqueeze/Reshape(x)))) is a plain Conv with
// group = 1 over the original input with the same weights (DESIGN.md P9).
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

PassResult repeat_to_plain_conv(Graph& graph, const PassOptions& options = {});

}  // namespace memledger
