// Checks the graph's invariants: execution order is topological (so acyclic), every input
// is defined, every value has one producer, outputs exist, constants match their values'
// types, and the operators whose typing rules the IR knows have consistent shapes and
// dtypes. A violation is an Error naming the node and value.
#pragma once

#include "memledger/ir/graph.h"

namespace memledger {

void verify_graph(const Graph& graph);

}  // namespace memledger
