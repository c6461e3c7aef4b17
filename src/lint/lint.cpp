#include "memledger/lint/lint.h"

namespace memledger {

std::vector<Diagnostic> run_lints(const Graph& graph) { return lint_ambiguous_broadcast_axis(graph); }

}  // namespace memledger
