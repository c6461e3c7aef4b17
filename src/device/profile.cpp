#include "memledger/device/profile.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>

#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/core/text.h"

namespace memledger {
namespace {

constexpr int64_t kMaxProfileFileBytes = 1 << 20;
// Capacities and external memory up to 2^50 B (a petabyte).
constexpr int64_t kMaxProfileInteger = int64_t{1} << 50;

// Reads one validated field after another; every message names the source, line and key.
class FieldReader {
 public:
  explicit FieldReader(const std::string& source) : source_(source) {}

  [[noreturn]] void bad(const toml::node& node, std::string_view key, const std::string& message) const {
    fail("{}:{}: key '{}': {}", source_, node.source().begin.line, key, message);
  }

  // Bounds keep every figure computed from a profile (traffic = transfers × granularity,
  // cycles, arena offsets) inside 64 bits for any model we accept.
  int64_t integer(const toml::node& node, std::string_view key, int64_t min, int64_t max = kMaxProfileInteger) const {
    const auto value = node.value_exact<int64_t>();
    if (!value) bad(node, key, fmt::format("expected an integer, got {}", type_name(node)));
    if (*value < min || *value > max)
      bad(node, key, fmt::format("{} is out of range (must be in [{}, {}])", *value, min, max));
    return *value;
  }

  double positive_number(const toml::node& node, std::string_view key) const {
    std::optional<double> value;
    if (node.is_integer()) value = static_cast<double>(*node.value_exact<int64_t>());
    if (node.is_floating_point()) value = *node.value_exact<double>();
    if (!value) bad(node, key, fmt::format("expected a number, got {}", type_name(node)));
    if (!(*value > 0)) bad(node, key, fmt::format("{} must be greater than zero", *value));
    if (!(*value <= 1e12)) bad(node, key, fmt::format("{} is out of range (at most 1e12)", *value));
    return *value;
  }

  bool boolean(const toml::node& node, std::string_view key) const {
    const auto value = node.value_exact<bool>();
    if (!value) bad(node, key, fmt::format("expected true or false, got {}", type_name(node)));
    return *value;
  }

  std::string string(const toml::node& node, std::string_view key) const {
    const auto value = node.value_exact<std::string>();
    if (!value) bad(node, key, fmt::format("expected a string, got {}", type_name(node)));
    return *value;
  }

  // A string that must be one of `choices`.
  std::string choice(const toml::node& node, std::string_view key,
                     std::initializer_list<std::string_view> choices) const {
    const std::string value = string(node, key);
    for (auto c : choices)
      if (c == value) return value;
    bad(node, key, fmt::format("'{}' is not one of: {}", value, fmt::join(choices, ", ")));
  }

 private:
  static std::string type_name(const toml::node& node) {
    switch (node.type()) {
      case toml::node_type::string:
        return "a string";
      case toml::node_type::integer:
        return "an integer";
      case toml::node_type::floating_point:
        return "a floating-point number";
      case toml::node_type::boolean:
        return "a boolean";
      case toml::node_type::table:
        return "a table";
      case toml::node_type::array:
        return "an array";
      default:
        return "a date or time";
    }
  }
  const std::string& source_;
};

void read_dma(const toml::table& table, const FieldReader& read, const std::string& source, DmaProfile& dma) {
  for (auto&& [key, node] : table) {
    const std::string_view k = key.str();
    if (k == "granularity_bytes")
      dma.granularity_bytes = read.integer(node, "dma.granularity_bytes", 1, int64_t{1} << 30);
    else if (k == "setup_cycles")
      dma.setup_cycles = read.integer(node, "dma.setup_cycles", 0, int64_t{1} << 32);
    else if (k == "bytes_per_cycle")
      dma.bytes_per_cycle = read.positive_number(node, "dma.bytes_per_cycle");
    else if (k == "external_bytes")
      dma.external_bytes = read.integer(node, "dma.external_bytes", 0);
    else if (k == "double_buffering")
      dma.double_buffering = read.boolean(node, "dma.double_buffering");
    else
      fail(
          "{}:{}: unknown key 'dma.{}' (known: granularity_bytes, setup_cycles, bytes_per_cycle, external_bytes, "
          "double_buffering)",
          source, key.source().begin.line, k);
  }
}

// [ops.NAME]: in_place_input = I, workspace = BYTES or "output" or "K*output" (K an integer).
void read_ops(const toml::table& table, const FieldReader& read, const std::string& source,
              std::map<std::string, DeclaredOp, std::less<>>& ops) {
  for (auto&& [name, node] : table) {
    const std::string op_name(name.str());
    const toml::table* rules = node.as_table();
    if (!rules) read.bad(node, "ops." + op_name, "expected a table [ops." + op_name + "]");
    DeclaredOp op;
    for (auto&& [key, value] : *rules) {
      const std::string_view k = key.str();
      const std::string field = "ops." + op_name + "." + std::string(k);
      if (k == "in_place_input") {
        const int64_t input = read.integer(value, field, 0);
        if (input > 1023) read.bad(value, field, fmt::format("{} is out of range (at most 1023)", input));
        op.in_place_input = static_cast<int>(input);
      } else if (k == "workspace") {
        if (value.is_integer()) {
          op.workspace_bytes = read.integer(value, field, 0);
          continue;
        }
        const std::string text = read.string(value, field);
        if (text == "output") {
          op.workspace_output_multiple = 1;
        } else if (text.size() > 7 && text.ends_with("*output")) {
          const std::string factor = text.substr(0, text.size() - 7);
          int64_t k_value = 0;
          const auto [end, error] = std::from_chars(factor.data(), factor.data() + factor.size(), k_value);
          if (error != std::errc{} || end != factor.data() + factor.size() || k_value < 1 || k_value > 1024)
            read.bad(value, field, fmt::format("'{}': expected bytes, \"output\" or \"K*output\" (K 1..1024)", text));
          op.workspace_output_multiple = k_value;
        } else {
          read.bad(value, field, fmt::format("'{}': expected bytes, \"output\" or \"K*output\"", text));
        }
      } else {
        fail("{}:{}: unknown key '{}' (known: in_place_input, workspace)", source, key.source().begin.line, field);
      }
    }
    ops[op_name] = op;
  }
}

constexpr std::array<std::pair<std::string_view, unsigned>, 4> kHoldNames{{{"activations", kHoldsActivations},
                                                                           {"workspaces", kHoldsWorkspaces},
                                                                           {"constants", kHoldsConstants},
                                                                           {"inputs", kHoldsInputs}}};

// [[banks]]: name, capacity_bytes (required), alignment_bytes, access_cost or bytes_per_cycle,
// holds = ["activations", ...], read_only. `default_alignment` is the profile's.
std::vector<MemoryBank> read_banks(const toml::node& node, const FieldReader& read, const std::string& source,
                                   int64_t default_alignment) {
  const toml::array* array = node.as_array();
  if (!array || !array->is_array_of_tables()) read.bad(node, "banks", "expected tables [[banks]]");
  if (array->empty()) read.bad(node, "banks", "expected at least one [[banks]] table");
  if (array->size() > 64) read.bad(node, "banks", fmt::format("{} banks (at most 64)", array->size()));
  std::vector<MemoryBank> banks;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::table& table = *array->get(i)->as_table();
    const std::string at = fmt::format("banks[{}]", i);
    MemoryBank bank;
    bank.alignment_bytes = default_alignment;
    bool has_capacity = false, has_holds = false, has_cost = false;
    for (auto&& [key, value] : table) {
      const std::string_view k = key.str();
      const std::string field = at + "." + std::string(k);
      if (k == "name") {
        bank.name = read.string(value, field);
        if (bank.name.empty()) read.bad(value, field, "must not be empty");
        for (const MemoryBank& other : banks)
          if (other.name == bank.name) read.bad(value, field, fmt::format("a second bank named '{}'", bank.name));
      } else if (k == "capacity_bytes") {
        bank.capacity_bytes = read.integer(value, field, 1);
        has_capacity = true;
      } else if (k == "alignment_bytes") {
        bank.alignment_bytes = read.integer(value, field, 1, int64_t{1} << 30);
        if ((bank.alignment_bytes & (bank.alignment_bytes - 1)) != 0)
          read.bad(value, field, fmt::format("{} is not a power of two", bank.alignment_bytes));
      } else if (k == "access_cost" || k == "bytes_per_cycle") {
        if (has_cost) read.bad(value, field, "give access_cost or bytes_per_cycle, not both");
        const double number = read.positive_number(value, field);
        bank.access_cost = k == "access_cost" ? number : 1.0 / number;
        has_cost = true;
      } else if (k == "holds") {
        const toml::array* kinds = value.as_array();
        if (!kinds) read.bad(value, field, "expected an array of kinds (activations, workspaces, constants, inputs)");
        bank.holds = 0;
        for (const toml::node& kind : *kinds) {
          const std::string name = read.choice(kind, field, {"activations", "workspaces", "constants", "inputs"});
          for (const auto& [hold_name, bit] : kHoldNames)
            if (hold_name == name) bank.holds |= bit;
        }
        if (bank.holds == 0) read.bad(value, field, "a bank must hold something");
        has_holds = true;
      } else if (k == "read_only") {
        bank.read_only = read.boolean(value, field);
      } else {
        fail(
            "{}:{}: unknown key '{}' (known: name, capacity_bytes, alignment_bytes, access_cost, bytes_per_cycle, "
            "holds, read_only)",
            source, key.source().begin.line, field);
      }
    }
    const int line = table.source().begin.line;
    if (bank.name.empty()) fail("{}:{}: missing required key '{}.name'", source, line, at);
    if (!has_capacity) fail("{}:{}: missing required key '{}.capacity_bytes' (bank '{}')", source, line, at, bank.name);
    if (bank.read_only) {
      if (has_holds && bank.holds != kHoldsConstants)
        fail("{}:{}: key '{}.holds': a read-only bank holds only constants", source, line, at);
      bank.holds = kHoldsConstants;
    }
    banks.push_back(std::move(bank));
  }
  return banks;
}

}  // namespace

DeviceProfile parse_device_profile(std::string_view toml_text, const std::string& source) {
  toml::table table;
  try {
    table = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    fail("{}:{}: not valid TOML: {}", source, e.source().begin.line, e.description());
  }
  const FieldReader read(source);
  DeviceProfile profile;
  profile.source = source;
  bool has_name = false;
  const toml::node* banks = nullptr;
  const toml::node* capacity = nullptr;
  for (auto&& [key, node] : table) {
    const std::string_view k = key.str();
    if (k == "name") {
      profile.name = read.string(node, k);
      if (profile.name.empty()) read.bad(node, k, "must not be empty");
      has_name = true;
    } else if (k == "capacity_bytes") {
      profile.capacity_bytes = read.integer(node, k, 0);
      capacity = &node;
    } else if (k == "alignment_bytes") {
      profile.alignment_bytes = read.integer(node, k, 1, int64_t{1} << 30);
      if ((profile.alignment_bytes & (profile.alignment_bytes - 1)) != 0)
        read.bad(node, k, fmt::format("{} is not a power of two", profile.alignment_bytes));
    } else if (k == "layout") {
      profile.layout =
          read.choice(node, k, {"NCHW", "NHWC"}) == "NHWC" ? ActivationLayout::kNHWC : ActivationLayout::kNCHW;
    } else if (k == "aligned_run") {
      profile.aligned_run =
          read.choice(node, k, {"inner", "tensor"}) == "tensor" ? AlignedRun::kTensor : AlignedRun::kInner;
    } else if (k == "unit_inner_merge") {
      profile.unit_inner_merge = read.boolean(node, k);
    } else if (k == "storage") {
      const std::string storage = read.string(node, k);
      if (storage != "model") {
        profile.storage = dtype_from_name(storage);
        if (!profile.storage)
          read.bad(node, k, fmt::format("'{}' is neither 'model' nor a dtype (int8, int4, float16, ...)", storage));
      }
    } else if (k == "constants") {
      const std::string constants = read.choice(node, k, {"just_in_time", "resident", "external"});
      profile.constants = constants == "resident"   ? ConstantResidency::kResident
                          : constants == "external" ? ConstantResidency::kExternal
                                                    : ConstantResidency::kJustInTime;
    } else if (k == "inputs") {
      profile.inputs = read.choice(node, k, {"arena", "external"}) == "external" ? InputResidency::kExternal
                                                                                 : InputResidency::kArena;
    } else if (k == "dma") {
      const toml::table* dma = node.as_table();
      if (!dma) read.bad(node, k, "expected a table [dma]");
      read_dma(*dma, read, source, profile.dma);
    } else if (k == "ops") {
      const toml::table* ops = node.as_table();
      if (!ops) read.bad(node, k, "expected tables [ops.NAME]");
      read_ops(*ops, read, source, profile.ops);
    } else if (k == "banks") {
      banks = &node;  // read after the loop, once the profile's alignment is known
    } else if (k == "cycles_per_mac") {
      profile.cycles_per_mac = read.positive_number(node, k);
    } else {
      fail(
          "{}:{}: unknown key '{}' (known: name, capacity_bytes, alignment_bytes, layout, aligned_run, "
          "unit_inner_merge, storage, constants, inputs, cycles_per_mac, [dma], [ops.NAME], [[banks]])",
          source, key.source().begin.line, k);
    }
  }
  if (!has_name) fail("{}: missing required key 'name'", source);
  if (banks) {
    if (capacity)
      read.bad(*capacity, "capacity_bytes", "a profile with [[banks]] gives each bank its capacity_bytes instead");
    profile.banks = read_banks(*banks, read, source, profile.alignment_bytes);
    const auto primary = std::find_if(profile.banks.begin(), profile.banks.end(),
                                      [](const MemoryBank& b) { return (b.holds & kHoldsActivations) != 0; });
    if (primary == profile.banks.end())
      read.bad(*banks, "banks", "no bank holds activations (holds = [\"activations\", ...])");
    profile.capacity_bytes = primary->capacity_bytes;
  }
  return profile;
}

DeviceProfile load_device_profile_file(const std::string& path) {
  return parse_device_profile(read_input_file(path, kMaxProfileFileBytes, "device profile"), path);
}

DeviceProfile resolve_device(const std::string& name_or_path) {
  for (const auto& name : builtin_profile_names())
    if (name == name_or_path) return builtin_profile(name);
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(name_or_path, ec)))
    fail("'{}': not a built-in profile ({}) and no such file", name_or_path, fmt::join(builtin_profile_names(), ", "));
  return load_device_profile_file(name_or_path);
}

namespace {
std::string describe_banks(const DeviceProfile& p) {
  if (p.banks.empty()) return {};
  std::string text = fmt::format(", {:g} cycles per MAC", p.cycles_per_mac);
  for (const MemoryBank& b : p.banks)
    text += fmt::format("\n  bank {}: {} B, alignment {} B, access cost {:g}, holds {}{}", b.name, b.capacity_bytes,
                        b.alignment_bytes, b.access_cost, holds_to_string(b.holds), b.read_only ? " (read-only)" : "");
  return text;
}
}  // namespace

std::string holds_to_string(unsigned holds) {
  std::vector<std::string_view> names;
  for (const auto& [name, bit] : kHoldNames)
    if ((holds & bit) != 0) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string describe_profile(const DeviceProfile& p) {
  return fmt::format("{} ({}): capacity {}, alignment {} B, {}, aligned run = {}{}, storage {}, constants {}{}",
                     escape_for_terminal(p.name), escape_for_terminal(p.source),
                     p.unlimited() ? std::string("unlimited") : fmt::format("{} B", p.capacity_bytes),
                     p.alignment_bytes, to_string(p.layout), to_string(p.aligned_run),
                     p.unit_inner_merge ? " (unit_inner_merge)" : "", p.storage ? dtype_name(*p.storage) : "model",
                     to_string(p.constants), p.inputs == InputResidency::kExternal ? ", inputs external" : "") +
         describe_banks(p);
}

std::string to_toml(const DeviceProfile& p) {
  std::string text = fmt::format(
      "name = \"{}\"\n{}alignment_bytes = {}\nlayout = \"{}\"\naligned_run = \"{}\"\n"
      "unit_inner_merge = {}\nstorage = \"{}\"\nconstants = \"{}\"\ninputs = \"{}\"\n{}\n[dma]\ngranularity_bytes = "
      "{}\n"
      "setup_cycles = {}\nbytes_per_cycle = {}\nexternal_bytes = {}\ndouble_buffering = {}\n",
      p.name, p.banks.empty() ? fmt::format("capacity_bytes = {}\n", p.capacity_bytes) : std::string(),
      p.alignment_bytes, to_string(p.layout), to_string(p.aligned_run), p.unit_inner_merge,
      p.storage ? dtype_name(*p.storage) : "model", to_string(p.constants), to_string(p.inputs),
      !p.banks.empty() || p.cycles_per_mac != 1.0 ? fmt::format("cycles_per_mac = {}\n", p.cycles_per_mac)
                                                  : std::string(),
      p.dma.granularity_bytes, p.dma.setup_cycles, p.dma.bytes_per_cycle, p.dma.external_bytes, p.dma.double_buffering);
  for (const auto& [op, rules] : p.ops) {
    text += fmt::format("\n[ops.\"{}\"]\n", op);
    if (rules.in_place_input >= 0) text += fmt::format("in_place_input = {}\n", rules.in_place_input);
    if (rules.workspace_output_multiple > 0)
      text += fmt::format("workspace = \"{}*output\"\n", rules.workspace_output_multiple);
    else
      text += fmt::format("workspace = {}\n", rules.workspace_bytes);
  }
  for (const MemoryBank& b : p.banks) {
    std::vector<std::string> holds;
    for (const auto& [name, bit] : kHoldNames)
      if ((b.holds & bit) != 0) holds.push_back(fmt::format("\"{}\"", name));
    text += fmt::format(
        "\n[[banks]]\nname = \"{}\"\ncapacity_bytes = {}\nalignment_bytes = {}\naccess_cost = {}\nholds = [{}]\n"
        "read_only = {}\n",
        b.name, b.capacity_bytes, b.alignment_bytes, b.access_cost, fmt::join(holds, ", "), b.read_only);
  }
  return text;
}

std::string_view to_string(ActivationLayout layout) { return layout == ActivationLayout::kNHWC ? "NHWC" : "NCHW"; }
std::string_view to_string(AlignedRun run) { return run == AlignedRun::kTensor ? "tensor" : "inner"; }
std::string_view to_string(ConstantResidency residency) {
  switch (residency) {
    case ConstantResidency::kResident:
      return "resident";
    case ConstantResidency::kExternal:
      return "external";
    case ConstantResidency::kJustInTime:
      break;
  }
  return "just_in_time";
}
std::string_view to_string(InputResidency residency) {
  return residency == InputResidency::kExternal ? "external" : "arena";
}

}  // namespace memledger
