// `memledger inspect MODEL.onnx`: what the importer understood — nodes, every value's
// type, axis roles and layout under a device, constants with their compact size and how
// each use broadcasts them, lint warnings, and operators the tool cannot run.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "device_option.h"
#include "memledger/core/text.h"
#include "memledger/device/tensor_layout.h"
#include "memledger/lint/lint.h"
#include "memledger/onnx/import.h"
#include "memledger/report/units.h"

namespace memledger::cli {
namespace {

struct InspectOptions {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string input_layout = "NCHW";
  std::string device;
  std::string format = "text";
};

std::string roles_text(const Value& v) { return v.shape.empty() ? "-" : roles_to_string(v.roles); }

// Columns padded to their widest cell; the first row is the header.
void print_table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right_aligned = {}) {
  if (rows.empty()) return;
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      const bool right = c < right_aligned.size() && right_aligned[c];
      const std::string cell = c + 1 == row.size() && !right ? row[c]
                               : right                       ? fmt::format("{:>{}}", row[c], width[c])
                                                             : fmt::format("{:<{}}", row[c], width[c]);
      line += " " + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print("{}\n", escape_for_terminal(line));
  }
}

// How one use broadcasts a constant: the axes of the node's output it is repeated along.
struct ConstantUse {
  std::string node;
  Shape against;
  std::vector<std::string> repeated;  // axis names ("H", or "2" when no role is known)
  bool broadcast = false;             // false: the node reads it as an operand of its own
};

ConstantUse describe_use(const Graph& g, const Value& c, NodeId id) {
  const Node& node = g.node(id);
  ConstantUse use{.node = node.label()};
  if (!is_broadcasting_op(node) || node.outputs.empty()) return use;
  const Value& out = g.value(node.outputs[0]);
  if (c.shape.size() > out.shape.size()) return use;
  const size_t shift = out.shape.size() - c.shape.size();
  use.broadcast = true;
  use.against = out.shape;
  for (size_t a = 0; a < out.shape.size(); ++a) {
    const int64_t extent = a < shift ? 1 : c.shape[a - shift];
    if (extent == 1 && out.shape[a] > 1)
      use.repeated.push_back(out.roles[a] == AxisRole::kOther ? std::to_string(a)
                                                              : std::string(1, static_cast<char>(out.roles[a])));
  }
  return use;
}

std::string use_text(const ConstantUse& use) {
  if (!use.broadcast) return use.node + ": operand";
  if (use.repeated.empty()) return fmt::format("{}: full shape, no repeat", use.node);
  return fmt::format("{}: repeated along {} of {}", use.node, fmt::join(use.repeated, ","),
                     shape_to_string(use.against));
}

std::string value_kind(const Graph& g, ValueId id) {
  if (g.is_graph_input(id)) return "input";
  if (g.is_graph_output(id)) return "output";
  return "activation";
}

void run_inspect(const InspectOptions& o) {
  const DeviceProfile profile = resolve_device(o.device);
  ImportOptions import_options;
  for (const auto& text : o.input_shapes) add_input_shape(import_options, text);
  import_options.input_layout_nhwc = o.input_layout == "NHWC";
  const Graph g = import_onnx_file(o.model, import_options);
  const auto diagnostics = run_lints(g);

  // Values in a stable order: inputs, node outputs in execution order; constants apart.
  std::vector<ValueId> values(g.inputs().begin(), g.inputs().end());
  std::map<std::string, ValueId> constants;
  for (NodeId n : g.order()) {
    for (ValueId in : g.node(n).inputs)
      if (in.valid() && g.value(in).is_constant()) constants.emplace(g.value(in).name, in);
    for (ValueId out : g.node(n).outputs) values.push_back(out);
  }
  std::vector<NodeId> unknown;
  for (NodeId n : g.order())
    if (!is_known_operator(g.node(n), g.opset)) unknown.push_back(n);

  auto layout_of = [&](const Value& v) { return tensor_layout(profile, v.shape, v.dtype, v.roles); };
  auto op_name = [](const Node& n) { return n.domain.empty() ? n.op : n.domain + "." + n.op; };
  auto names = [&](const std::vector<ValueId>& ids) {
    std::vector<std::string> out;
    for (ValueId id : ids) out.push_back(id.valid() ? g.value(id).name : "_");
    return out;
  };

  if (o.format == "json") {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["model"] = o.model;
    j["graph"] = g.name;
    j["opset"] = g.opset;
    j["device"] = {{"name", profile.name},
                   {"capacity_bytes", profile.capacity_bytes},
                   {"alignment_bytes", profile.alignment_bytes}};
    j["nodes"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < g.order().size(); ++i) {
      const Node& n = g.node(g.order()[i]);
      j["nodes"].push_back({{"index", i},
                            {"name", n.name},
                            {"op", n.op},
                            {"domain", n.domain},
                            {"inputs", names(n.inputs)},
                            {"outputs", names(n.outputs)},
                            {"known", is_known_operator(n, g.opset)}});
    }
    auto value_json = [&](ValueId id, const std::string& kind) {
      const Value& v = g.value(id);
      const Layout l = layout_of(v);
      return nlohmann::ordered_json{{"name", v.name},
                                    {"kind", kind},
                                    {"dtype", dtype_name(v.dtype)},
                                    {"shape", v.shape},
                                    {"roles", roles_to_string(v.roles)},
                                    {"layout",
                                     {{"order", l.physical_order_name()},
                                      {"run", l.run_name()},
                                      {"run_elements", l.run_elements()},
                                      {"run_bytes", l.run_bytes()},
                                      {"alignment_bytes", l.rules().alignment_bytes}}},
                                    {"logical_bytes", l.logical_bytes()},
                                    {"physical_bytes", l.bytes()}};
    };
    j["values"] = nlohmann::ordered_json::array();
    for (ValueId id : values) j["values"].push_back(value_json(id, value_kind(g, id)));
    j["constants"] = nlohmann::ordered_json::array();
    for (const auto& [name, id] : constants) {
      auto c = value_json(id, "constant");
      c["uses"] = nlohmann::ordered_json::array();
      for (NodeId n : g.consumers(id)) {
        const ConstantUse use = describe_use(g, g.value(id), n);
        c["uses"].push_back({{"node", use.node},
                             {"broadcast", use.broadcast},
                             {"against", use.against},
                             {"repeated_axes", use.repeated}});
      }
      j["constants"].push_back(c);
    }
    j["lint"] = nlohmann::ordered_json::array();
    for (const auto& d : diagnostics) j["lint"].push_back({{"code", d.code}, {"node", d.node}, {"message", d.message}});
    j["unknown_operators"] = nlohmann::ordered_json::array();
    for (NodeId n : unknown)
      j["unknown_operators"].push_back(
          {{"node", g.node(n).label()}, {"op", g.node(n).op}, {"domain", g.node(n).domain}});
    fmt::print("{}\n", j.dump(2));
    return;
  }

  fmt::print("model: {} (graph '{}', opset {})\n", escape_for_terminal(o.model), escape_for_terminal(g.name), g.opset);
  fmt::print("device: {}\n", describe_device(profile));

  fmt::print("\nnodes ({})\n", g.order().size());
  std::vector<std::vector<std::string>> rows{{"#", "op", "name", "inputs", "outputs"}};
  for (size_t i = 0; i < g.order().size(); ++i) {
    const Node& n = g.node(g.order()[i]);
    rows.push_back({std::to_string(i), op_name(n), n.name.empty() ? "-" : n.name,
                    fmt::format("{}", fmt::join(names(n.inputs), ", ")),
                    fmt::format("{}", fmt::join(names(n.outputs), ", "))});
  }
  print_table(rows, {true});

  fmt::print("\nvalues ({})\n", values.size());
  rows = {{"name", "kind", "dtype", "shape", "roles", "order", "run", "align", "logical", "physical"}};
  int64_t total_logical = 0, total_physical = 0;
  for (ValueId id : values) {
    const Value& v = g.value(id);
    const Layout l = layout_of(v);
    total_logical += l.logical_bytes();
    total_physical += l.bytes();
    rows.push_back({v.name, value_kind(g, id), std::string(dtype_name(v.dtype)), shape_to_string(v.shape),
                    roles_text(v), l.physical_order_name(), l.run_name(),
                    fmt::format("{} B", l.rules().alignment_bytes), human_bytes(l.logical_bytes()),
                    human_bytes(l.bytes())});
  }
  print_table(rows, {false, false, false, false, false, false, false, true, true, true});
  fmt::print("  all values together (no reuse): logical {}, physical {}\n", human_bytes(total_logical),
             human_bytes(total_physical));

  fmt::print("\nconstants ({})\n", constants.size());
  rows = {{"name", "dtype", "shape", "roles", "compact", "physical", "uses"}};
  for (const auto& [name, id] : constants) {
    const Value& v = g.value(id);
    const Layout l = layout_of(v);
    std::vector<std::string> uses;
    for (NodeId n : g.consumers(id)) uses.push_back(use_text(describe_use(g, v, n)));
    rows.push_back({name, std::string(dtype_name(v.dtype)), shape_to_string(v.shape), roles_text(v),
                    human_bytes(l.logical_bytes()), human_bytes(l.bytes()), fmt::format("{}", fmt::join(uses, "; "))});
  }
  print_table(rows, {false, false, false, false, true, true});

  fmt::print("\nlint ({})\n", diagnostics.size());
  for (const auto& d : diagnostics) fmt::print("  warning [{}] {}\n", d.code, escape_for_terminal(d.message));
  fmt::print("\nunknown operators ({})\n", unknown.size());
  for (NodeId n : unknown)
    fmt::print("  {} (node {}): no ONNX schema at opset {}; execution will refuse it\n",
               escape_for_terminal(op_name(g.node(n))), escape_for_terminal(g.node(n).label()), g.opset);
}

}  // namespace

void register_inspect(CLI::App& app, int& exit_code) {
  auto* command =
      app.add_subcommand("inspect", "show a model as memledger reads it: nodes, shapes, axis roles, layouts, lint");
  auto options = std::make_shared<InspectOptions>();
  command->add_option("model", options->model, "the ONNX model file")->required();
  command->add_option("--input-shape", options->input_shapes,
                      "static shape of a graph input with dynamic dimensions, NAME=1x3x224x224 (repeatable)");
  command->add_option("--input-layout", options->input_layout, "layout of 4-D graph inputs")
      ->check(CLI::IsMember({"NCHW", "NHWC"}))
      ->capture_default_str();
  add_device_option(command, options->device, "host");
  command->add_option("--format", options->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command->callback([options, &exit_code] {
    run_inspect(*options);
    exit_code = static_cast<int>(ExitCode::kOk);
  });
}

}  // namespace memledger::cli
