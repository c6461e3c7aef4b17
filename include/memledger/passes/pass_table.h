// The pass table: every rewriting pass by name, with its one-line summary and whether it
// is exact (the same function in real arithmetic; the default pipeline runs only those),
// and the pipeline runner that `optimize` and the tests use. Halide's Lower.cpp is the
// model: a script of passes with an optional dump of the IR after each one.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

struct PassInfo {
  std::string_view name;     // "compact-constants"
  std::string_view summary;  // one line for --help and reports
  bool exact = true;         // false: changes numbers (only when asked for)
  std::function<PassResult(Graph&, const PassOptions&)> run;
};

// In the default pipeline's order.
const std::vector<PassInfo>& pass_table();
// The entry named `name`; an Error listing the known names when there is none.
const PassInfo& find_pass(std::string_view name);
// The names of the default pipeline: every exact pass, in table order.
std::vector<std::string> default_pipeline();
// "a,b,c" → names, each checked against the table.
std::vector<std::string> parse_pipeline(const std::string& list);

// Constant bytes (host storage) reachable from the graph's outputs.
int64_t reachable_constant_bytes(const Graph& graph);

// Runs one pass, verifying the graph afterwards and measuring bytes saved.
PassResult run_pass(const PassInfo& pass, Graph& graph, const PassOptions& options = {});

struct PipelineStep {
  std::string pass;
  PassResult result;
};

// Runs the passes in order. `dump`, when set, receives after each pass a header line
// ("// after compact-constants" or "// after dead-code (unchanged)") and the text form.
std::vector<PipelineStep> run_pipeline(Graph& graph, const std::vector<std::string>& passes,
                                       const PassOptions& options = {},
                                       const std::function<void(const std::string&)>& dump = {});

}  // namespace memledger
