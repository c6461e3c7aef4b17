#include "memledger/report/inspect_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "memledger/device/tensor_layout.h"
#include "memledger/ir/op_table.h"
#include "memledger/ir/quantization_check.h"
#include "memledger/report/units.h"

namespace memledger {
namespace {

std::string roles_text(const Value& v) { return v.shape.empty() ? "-" : roles_to_string(v.roles); }

// Columns padded to their widest cell; the first row is the header.
std::string table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right_aligned = {}) {
  std::string out;
  if (rows.empty()) return out;
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
    out += line + "\n";
  }
  return out;
}

ConstantUse describe_use(const Graph& g, const Value& c, NodeId id) {
  const Node& node = g.node(id);
  ConstantUse use{.node = node.label()};
  if (!broadcasts(node) || node.outputs.empty()) return use;
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

// "int8", or "int8 s=0.0235 zp=-12" for a quantized value.
std::string dtype_text(const Value& v) {
  return v.quant ? fmt::format("{} {}", dtype_name(v.dtype), describe_quantization(*v.quant))
                 : std::string(dtype_name(v.dtype));
}

bool any_quantized(const Graph& g, const Inspection& r) {
  auto quantized = [&](ValueId id) { return g.value(id).quant.has_value(); };
  return std::any_of(r.values.begin(), r.values.end(), quantized) ||
         std::any_of(r.constants.begin(), r.constants.end(), [&](const auto& c) { return quantized(c.second); });
}

std::string value_kind(const Graph& g, ValueId id) {
  if (g.is_graph_input(id)) return "input";
  if (g.is_graph_output(id)) return "output";
  return "activation";
}

std::vector<std::string> names(const Graph& g, const std::vector<ValueId>& ids) {
  std::vector<std::string> out;
  for (ValueId id : ids) out.push_back(id.valid() ? g.value(id).name : "_");
  return out;
}

}  // namespace

Inspection inspect_graph(const Graph& g, const DeviceProfile& profile) {
  Inspection r;
  r.diagnostics = run_lints(g);
  r.values.assign(g.inputs().begin(), g.inputs().end());
  for (NodeId n : g.order()) {
    for (ValueId in : g.node(n).inputs)
      if (in.valid() && g.value(in).is_constant()) r.constants.emplace(g.value(in).name, in);
    for (ValueId out : g.node(n).outputs) r.values.push_back(out);
    if (!op_is_known(g.node(n), profile)) r.unknown.push_back(n);
  }
  for (const auto& [name, id] : r.constants)
    for (NodeId n : g.consumers(id)) r.constant_uses[name].push_back(describe_use(g, g.value(id), n));
  return r;
}

std::string inspection_text(const Graph& g, const DeviceProfile& profile, const Inspection& r,
                            const std::string& model) {
  auto layout_of = [&](const Value& v) { return tensor_layout(profile, v.shape, v.dtype, v.roles); };
  std::string out = fmt::format("model: {} (graph '{}', opset {})\n", model, g.name, g.opset);
  out += fmt::format("device: {}\n", describe_profile(profile));
  if (any_quantized(g, r)) out += fmt::format("requantization: {}\n", to_string(g.requantization));

  out += fmt::format("\nnodes ({})\n", g.order().size());
  std::vector<std::vector<std::string>> rows{{"#", "op", "name", "inputs", "outputs"}};
  for (size_t i = 0; i < g.order().size(); ++i) {
    const Node& n = g.node(g.order()[i]);
    rows.push_back({std::to_string(i), op_name(n), n.name.empty() ? "-" : n.name,
                    fmt::format("{}", fmt::join(names(g, n.inputs), ", ")),
                    fmt::format("{}", fmt::join(names(g, n.outputs), ", "))});
  }
  out += table(rows, {true});

  out += fmt::format("\nvalues ({})\n", r.values.size());
  rows = {{"name", "kind", "dtype", "shape", "roles", "order", "run", "align", "logical", "physical"}};
  int64_t total_logical = 0, total_physical = 0;
  for (ValueId id : r.values) {
    const Value& v = g.value(id);
    const Layout l = layout_of(v);
    total_logical += l.logical_bytes();
    total_physical += l.bytes();
    rows.push_back({v.name, value_kind(g, id), dtype_text(v), shape_to_string(v.shape), roles_text(v),
                    l.physical_order_name(), l.run_name(), fmt::format("{} B", l.rules().alignment_bytes),
                    human_bytes(l.logical_bytes()), human_bytes(l.bytes())});
  }
  out += table(rows, {false, false, false, false, false, false, false, true, true, true});
  out += fmt::format("  all values together (no reuse): logical {}, physical {}\n", human_bytes(total_logical),
                     human_bytes(total_physical));

  out += fmt::format("\nconstants ({})\n", r.constants.size());
  rows = {{"name", "dtype", "shape", "roles", "compact", "physical", "uses"}};
  for (const auto& [name, id] : r.constants) {
    const Value& v = g.value(id);
    const Layout l = layout_of(v);
    std::vector<std::string> uses;
    if (const auto it = r.constant_uses.find(name); it != r.constant_uses.end())
      for (const ConstantUse& use : it->second) uses.push_back(use_text(use));
    rows.push_back({name, dtype_text(v), shape_to_string(v.shape), roles_text(v), human_bytes(l.logical_bytes()),
                    human_bytes(l.bytes()), fmt::format("{}", fmt::join(uses, "; "))});
  }
  out += table(rows, {false, false, false, false, true, true});

  out += fmt::format("\nlint ({})\n", r.diagnostics.size());
  for (const auto& d : r.diagnostics) out += fmt::format("  warning [{}] {}\n", d.code, d.message);
  out += fmt::format("\nunknown operators ({})\n", r.unknown.size());
  for (NodeId n : r.unknown)
    out += fmt::format(
        "  {} (node {}): not in the op table; plan needs its rules in the profile's [ops.{}], run cannot execute it\n",
        op_name(g.node(n)), g.node(n).label(), op_name(g.node(n)));
  return out;
}

std::string inspection_json(const Graph& g, const DeviceProfile& profile, const Inspection& r,
                            const std::string& model) {
  using nlohmann::ordered_json;
  auto layout_of = [&](const Value& v) { return tensor_layout(profile, v.shape, v.dtype, v.roles); };
  ordered_json j;
  j["schema_version"] = 1;
  j["model"] = model;
  j["graph"] = g.name;
  j["opset"] = g.opset;
  j["device"] = {
      {"name", profile.name}, {"capacity_bytes", profile.capacity_bytes}, {"alignment_bytes", profile.alignment_bytes}};
  j["requantization"] = to_string(g.requantization);
  j["nodes"] = ordered_json::array();
  for (size_t i = 0; i < g.order().size(); ++i) {
    const Node& n = g.node(g.order()[i]);
    j["nodes"].push_back({{"index", i},
                          {"name", n.name},
                          {"op", n.op},
                          {"domain", n.domain},
                          {"inputs", names(g, n.inputs)},
                          {"outputs", names(g, n.outputs)},
                          {"known", op_is_known(n, profile)}});
  }
  auto value_json = [&](ValueId id, const std::string& kind) {
    const Value& v = g.value(id);
    const Layout l = layout_of(v);
    ordered_json value{{"name", v.name},
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
    // Quantized values: real = scale · (q − zero_point), one pair per index of `axis` (-1: per tensor).
    if (v.quant)
      value["quantization"] = {
          {"scales", v.quant->scales}, {"zero_points", v.quant->zero_points}, {"axis", v.quant->axis}};
    return value;
  };
  j["values"] = ordered_json::array();
  for (ValueId id : r.values) j["values"].push_back(value_json(id, value_kind(g, id)));
  j["constants"] = ordered_json::array();
  for (const auto& [name, id] : r.constants) {
    auto c = value_json(id, "constant");
    c["uses"] = ordered_json::array();
    if (const auto it = r.constant_uses.find(name); it != r.constant_uses.end())
      for (const ConstantUse& use : it->second)
        c["uses"].push_back({{"node", use.node},
                             {"broadcast", use.broadcast},
                             {"against", use.against},
                             {"repeated_axes", use.repeated}});
    j["constants"].push_back(c);
  }
  j["lint"] = ordered_json::array();
  for (const auto& d : r.diagnostics) j["lint"].push_back({{"code", d.code}, {"node", d.node}, {"message", d.message}});
  j["unknown_operators"] = ordered_json::array();
  for (NodeId n : r.unknown)
    j["unknown_operators"].push_back({{"node", g.node(n).label()}, {"op", g.node(n).op}, {"domain", g.node(n).domain}});
  return j.dump(2) + "\n";
}

}  // namespace memledger
