#include "memledger/ir/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "memledger/ir/quantization_check.h"

namespace memledger {
namespace {

std::string ref(const Graph& g, ValueId id) { return id.valid() ? "%" + g.value(id).name : "_"; }

// Small constants print their values; larger ones a count and a checksum of the bytes.
std::string constant_summary(const Tensor& t) {
  if (t.elements() <= 8) {
    std::vector<std::string> items;
    for (int64_t i = 0; i < t.elements(); ++i) items.push_back(fmt::format("{}", t.element_as_double(i)));
    return fmt::format("[{}]", fmt::join(items, ", "));
  }
  uint32_t hash = 2166136261u;  // FNV-1a
  for (std::byte b : t.bytes()) hash = (hash ^ static_cast<uint32_t>(b)) * 16777619u;
  return fmt::format("<{} values, fnv1a {:08x}>", t.elements(), hash);
}

}  // namespace

std::string describe_value_type(const Value& value) {
  std::string text = fmt::format("{}{}", dtype_name(value.dtype), shape_to_string(value.shape));
  const bool any_role =
      std::any_of(value.roles.begin(), value.roles.end(), [](AxisRole r) { return r != AxisRole::kOther; });
  if (any_role) text += " " + roles_to_string(value.roles);
  if (value.quant) text += " " + describe_quantization(*value.quant);
  return text;
}

std::string print_graph(const Graph& g) {
  std::string out = fmt::format("graph {} opset {}\n", g.name, g.opset);
  const std::vector<ValueId> reachable = g.reachable_values();
  if (std::any_of(reachable.begin(), reachable.end(), [&](ValueId v) { return g.value(v).quant.has_value(); }))
    out += fmt::format("requantization {}\n", to_string(g.requantization));
  for (ValueId in : g.inputs()) out += fmt::format("input {} : {}\n", ref(g, in), describe_value_type(g.value(in)));

  std::set<std::pair<std::string, int32_t>> constants;
  for (NodeId n : g.order())
    for (ValueId in : g.node(n).inputs)
      if (in.valid() && g.value(in).is_constant()) constants.insert({g.value(in).name, in.index});
  for (ValueId o : g.outputs())
    if (o.valid() && g.value(o).is_constant()) constants.insert({g.value(o).name, o.index});
  for (const auto& [name, index] : constants) {
    const Value& v = g.value(ValueId{index});
    out += fmt::format("const %{} : {} = {}\n", name, describe_value_type(v), constant_summary(*v.constant));
  }

  for (NodeId n : g.order()) {
    const Node& node = g.node(n);
    std::vector<std::string> outs, ins, attrs, types;
    for (ValueId o : node.outputs) {
      outs.push_back(ref(g, o));
      types.push_back(describe_value_type(g.value(o)));
    }
    for (ValueId i : node.inputs) ins.push_back(ref(g, i));
    for (const auto& [key, value] : node.attributes) attrs.push_back(key + "=" + attribute_to_string(value));
    const std::string op = node.domain.empty() ? node.op : node.domain + "." + node.op;
    out += fmt::format("{} = {}({}){} : {}\n", fmt::join(outs, ", "), op, fmt::join(ins, ", "),
                       attrs.empty() ? "" : " {" + fmt::format("{}", fmt::join(attrs, ", ")) + "}",
                       fmt::join(types, ", "));
  }
  for (ValueId o : g.outputs()) out += fmt::format("output {}\n", ref(g, o));
  return out;
}

}  // namespace memledger
