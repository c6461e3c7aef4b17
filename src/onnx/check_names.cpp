#include "onnx/check_names.h"

#include <fmt/format.h>

#include <string>

#include "memledger/core/error.h"
#include "memledger/core/text.h"

namespace memledger::onnx_io {

void check_names(const onnx::GraphProto& graph) {
  const auto check = [](const std::string& name, const std::string& what) {
    if (!is_valid_utf8(name)) fail("{} '{}' is not valid UTF-8", what, escape_for_terminal(name));
  };
  check(graph.name(), "the graph name");
  for (const auto& v : graph.input()) check(v.name(), "graph input");
  for (const auto& v : graph.output()) check(v.name(), "graph output");
  for (const auto& v : graph.value_info()) check(v.name(), "value");
  for (const auto& t : graph.initializer()) check(t.name(), "initializer");
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    check(node.name(), "node name");
    check(node.op_type(), "operator");
    for (const auto& n : node.input()) check(n, fmt::format("node #{}: input", i));
    for (const auto& n : node.output()) check(n, fmt::format("node #{}: output", i));
  }
}

}  // namespace memledger::onnx_io
