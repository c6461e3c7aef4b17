// The teaching example's plan variants A–D (DESIGN.md §5), built as graphs through the
// library, and the model a user would bring (Mul + Add with constants stored expanded).
#pragma once

#include <string>
#include <vector>

#include "memledger/ir/graph.h"
#include "memledger/plan/liveness.h"

namespace memledger::teaching {

struct Variant {
  char letter;
  std::string title;
  std::string story;  // one sentence: what differs and why it matters
  Graph graph;
  PlanOptions options;
};

// A: expanded parameters + the historical kernel (workspace the size of the output);
// B: compact parameters, the current kernel; C: B with the output written over the
// (donated) input; D: C, but x also feeds a later Add, so in-place is refused.
std::vector<Variant> affine_variants();

// x → Mul(scale) → Add(bias) → y with scale and bias stored at x's full shape, as some
// exporters write it: the model `plan` explains and `optimize` turns into variant C.
Graph expanded_mul_add_model();

}  // namespace memledger::teaching
