#include "memledger/lint/lint.h"

#include <set>
#include <string>

#include "memledger/ir/affine.h"

namespace memledger {

bool is_broadcasting_op(const Node& n) {
  static const std::set<std::string> ops{
      "Add",   "Sub", "Mul", "Div", "Pow",   "PRelu", "Max",     "Min",      "Sum",         "Mean",          "Mod",
      "Where", "And", "Or",  "Xor", "Equal", "Less",  "Greater", "BitShift", "LessOrEqual", "GreaterOrEqual"};
  return (n.domain.empty() && ops.count(n.op) != 0) || is_affine(n);
}

std::vector<Diagnostic> run_lints(const Graph& graph) { return lint_ambiguous_broadcast_axis(graph); }

}  // namespace memledger
