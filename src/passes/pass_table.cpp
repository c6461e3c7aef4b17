#include "memledger/passes/pass_table.h"

#include <fmt/format.h>

#include <sstream>

#include "memledger/core/error.h"
#include "memledger/ir/printer.h"
#include "memledger/ir/verifier.h"
#include "memledger/passes/compact_constants.h"
#include "memledger/passes/dead_code.h"
#include "memledger/passes/duplicate_constants.h"
#include "memledger/passes/fold_batchnorm.h"
#include "memledger/passes/fold_constants.h"
#include "memledger/passes/fuse_affine.h"
#include "memledger/passes/lazy_expand.h"
#include "memledger/passes/repeat_to_plain_conv.h"
#include "memledger/passes/unit_coefficient.h"

namespace memledger {

const std::vector<PassInfo>& pass_table() {
  // Order matters: constants fold first (Identity over a weight hides it from the
  // patterns after); BatchNorm folds into a Conv before the rest become Affines; unit
  // coefficients are found on Affines; dead code goes last.
  static const std::vector<PassInfo> table{
      {"fold-constants", "evaluate nodes whose inputs are all constants, unless the result is bigger than those inputs",
       true, fold_constants},
      {"fold-batchnorm", "fold inference BatchNormalization into the Conv before it", true, fold_batchnorm},
      {"fuse-affine", "per-channel Mul+Add and BatchNormalization become one Affine with compact parameters", true,
       fuse_affine},
      {"unit-coefficient",
       "scale 1 → bias add; scale 1, bias 0 → identity; Q(DQ(q)) → q; same-range requantize → one Q→DQ", true,
       unit_coefficient},
      {"repeat-to-plain-conv", "grouped Conv over an input repeated group times → plain Conv on the original", true,
       repeat_to_plain_conv},
      {"lazy-expand", "remove Expand/Tile whose consumers broadcast anyway", true, lazy_expand},
      {"compact-constants", "store constants repeated along axes compact; consumers broadcast", true,
       compact_constants},
      {"duplicate-constants", "share constants equal in dtype, shape and bytes", true, duplicate_constants},
      {"dead-code", "remove nodes whose outputs nothing uses", true, dead_code},
  };
  return table;
}

const PassInfo& find_pass(std::string_view name) {
  std::string known;
  for (const PassInfo& p : pass_table()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  fail("unknown pass '{}' (known: {})", name, known);
}

std::vector<std::string> default_pipeline() {
  std::vector<std::string> names;
  for (const PassInfo& p : pass_table())
    if (p.exact) names.emplace_back(p.name);
  return names;
}

std::vector<std::string> parse_pipeline(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    find_pass(item);
    names.push_back(item);
  }
  if (names.empty()) fail("'{}': no pass named", list);
  return names;
}

int64_t reachable_constant_bytes(const Graph& graph) {
  int64_t total = 0;
  for (ValueId id : graph.reachable_values()) {
    const Value& v = graph.value(id);
    if (v.is_constant()) total += static_cast<int64_t>(v.constant->bytes().size());
  }
  return total;
}

PassResult run_pass(const PassInfo& pass, Graph& graph, const PassOptions& options) {
  const int64_t before = reachable_constant_bytes(graph);
  PassResult result = pass.run(graph, options);
  verify_graph(graph);
  result.bytes_saved = before - reachable_constant_bytes(graph);
  return result;
}

std::vector<PipelineStep> run_pipeline(Graph& graph, const std::vector<std::string>& passes, const PassOptions& options,
                                       const std::function<void(const std::string&)>& dump) {
  std::vector<PipelineStep> steps;
  for (const std::string& name : passes) {
    const PassResult result = run_pass(find_pass(name), graph, options);
    steps.push_back({name, result});
    if (dump) dump(fmt::format("// after {}{}\n{}", name, result.changed() ? "" : " (unchanged)", print_graph(graph)));
  }
  return steps;
}

}  // namespace memledger
