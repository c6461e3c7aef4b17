// The stable, diff-friendly text form of a graph: the basis of golden tests and of
// `--dump` after each pass. One line per input, used constant, node and output.
#pragma once

#include <string>

#include "memledger/ir/graph.h"

namespace memledger {

std::string print_graph(const Graph& graph);
// "float32[1,12,20,28] NCHW"; a quantized value adds its parameters: "int8[1,8] s=0.04 zp=-5"
std::string describe_value_type(const Value& value);

}  // namespace memledger
