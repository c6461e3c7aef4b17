// Lints: findings about a model that is valid but probably not what its author meant.
// They are returned as values; the caller decides how to show them.
#pragma once

#include <string>
#include <vector>

#include "memledger/ir/graph.h"

namespace memledger {

struct Diagnostic {
  std::string code;     // "ambiguous-broadcast-axis"
  std::string node;     // the node's label: "Mul 'scale_mul'"
  std::string message;  // one sentence or two: what, where, and how to state the intent
};

// P2: a constant parameter of shape [..1, L] with fewer axes than the tensor it broadcasts
// against aligns to the tensor's last axis (ONNX broadcasting is right-aligned). When L
// is also the extent of another axis (C == W), the author may have meant that one
// (usually the channel): warn, name the axis actually used and the reshape that states
// the intent. Quiet when all extents differ or the parameter already has the tensor's
// rank ([1,C,1,1] says which axis it means).
std::vector<Diagnostic> lint_ambiguous_broadcast_axis(const Graph& graph);

// Every lint, in a stable order.
std::vector<Diagnostic> run_lints(const Graph& graph);

}  // namespace memledger
