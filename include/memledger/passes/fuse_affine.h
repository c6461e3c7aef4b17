// Per-channel Mul then Add with constant parameters, and inference BatchNormalization,
// become one memledger.Affine with compact parameters (exported back as Mul + Add).
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

PassResult fuse_affine(Graph& graph, const PassOptions& options = {});

}  // namespace memledger
