// Folds an inference BatchNormalization into the Conv that alone feeds it: the weights
// and bias absorb the per-channel scale and shift.
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

PassResult fold_batchnorm(Graph& graph, const PassOptions& options = {});

}  // namespace memledger
