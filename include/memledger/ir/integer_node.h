// Which nodes are integer operators (ir/quantization.h): a node whose data input 0 or output
// 0 is quantized is the integer operator of its name. The op table's contracts (an integer
// Conv's workspace) and the kernel table's dispatch read this one rule. A graph with a
// quantized value is a quantized model: it is planned in its own dtypes (plan/liveness).
#pragma once

#include "memledger/ir/graph.h"

namespace memledger {

bool is_integer_node(const Graph& graph, const Node& node);
bool is_quantized_model(const Graph& graph);

}  // namespace memledger
