// Constant folding: a node whose inputs are all constants is evaluated once, by the
// interpreter's own kernel (PassOptions::evaluate), and its outputs become constants. Size-limited: a fold whose
// result takes more bytes than the node's constant inputs together (Expand, Tile,
// ConstantOfShape, Range to a big shape; a widening Cast) is left as it is, a compact
// broadcast computed at run time, instead of a blown-up constant (the seeds' lesson, and
// onnxsim's blow-up). Identity and Dropout over a constant forward the constant itself.
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

// Every foldable node, in execution order (a fold can make its consumers foldable).
PassResult fold_constants(Graph& graph, const PassOptions& options = {});

// The cheap folds that never copy or grow a constant: Identity and inference Dropout over
// a constant are replaced by the constant. `plan`, `inspect` and `run` apply these on load
// so exporter Identity nodes over initializers are not planned as activations.
PassResult fold_identity_constants(Graph& graph);

}  // namespace memledger
