// GELU in its erf form, y = x·½(1 + erf(x/√2)), as exporters write it: five nodes over x,
//   torch.onnx below opset 20:  Mul(Mul(x, Add(Erf(Div(x, √2)), 1)), ½)
//   and the same with Mul(x, 1/√2) for the Div (other converters), either operand order of
//   each Add and Mul. Five full buffers, four of them read once; the fast kernels compute the
//   whole of it at the inner Mul, the one node after the Div that reads x (oneDNN's erf GELU),
//   so that neither the erf nor the three passes around it run element by element. The one
//   matcher of the pattern; exec/fast asks it.
#pragma once

#include <optional>

#include "memledger/ir/graph.h"

namespace memledger {

// The pattern's nodes: div (x/√2 or x·(1/√2)), erf, add (+1), mul (x·that), half (·½).
// Every value but x and y is read by the next node only and is no graph output; all are
// float32 of x's shape.
struct ErfGelu {
  ValueId x;
  NodeId div, erf, add, mul, half;
  int mul_x = -1;  // which of mul's inputs is x
};

// The GELU whose inner Mul (mul) is `node`, or none.
std::optional<ErfGelu> match_erf_gelu(const Graph& graph, const Node& node);

// The GELU `node` is one of the five nodes of, found from it, or none.
std::optional<ErfGelu> erf_gelu_of(const Graph& graph, const Node& node);

}  // namespace memledger
