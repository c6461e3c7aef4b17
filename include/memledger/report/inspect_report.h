// `memledger inspect`: what the importer understood — nodes, every value's type, axis roles
// and layout under a device, constants with their compact size and how each use broadcasts
// them, lint warnings, and operators the op table does not know. The analysis and both of
// its forms (text for people, JSON schema_version 1) live here; the command prints them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "memledger/device/profile.h"
#include "memledger/ir/graph.h"
#include "memledger/lint/lint.h"

namespace memledger {

// How one use broadcasts a constant: the axes of the node's output it is repeated along.
struct ConstantUse {
  std::string node;
  Shape against;
  std::vector<std::string> repeated;  // axis names ("H", or "2" when no role is known)
  bool broadcast = false;             // false: the node reads it as an operand of its own
};

struct Inspection {
  std::vector<ValueId> values;               // inputs, then node outputs in execution order
  std::map<std::string, ValueId> constants;  // by name
  std::map<std::string, std::vector<ConstantUse>> constant_uses;
  std::vector<NodeId> unknown;          // operators neither the op table nor the profile knows
  std::vector<Diagnostic> diagnostics;  // lint
};

Inspection inspect_graph(const Graph& graph, const DeviceProfile& profile);
std::string inspection_text(const Graph& graph, const DeviceProfile& profile, const Inspection& inspection,
                            const std::string& model);
std::string inspection_json(const Graph& graph, const DeviceProfile& profile, const Inspection& inspection,
                            const std::string& model);

}  // namespace memledger
