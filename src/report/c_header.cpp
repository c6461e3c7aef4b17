#include "memledger/report/c_header.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <limits>
#include <set>
#include <unordered_map>

#include "memledger/core/error.h"
#include "memledger/core/text.h"
#include "memledger/version.h"

namespace memledger {
namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A C identifier fragment for a name: anything but [A-Za-z0-9_] becomes '_'.
std::string identifier_part(const std::string& name) {
  std::string s = name.empty() ? "unnamed" : name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return s;
}

// A C string literal; every byte outside printable ASCII (and ", \, ?) as an octal escape, so
// a name never ends the literal, starts a trigraph or a comment.
std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c >= 0x7F || c == '?')
      out += fmt::format("\\{:03o}", c);
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

// Text for a comment: no "*/" can close it early, no control bytes; bytes that are not UTF-8
// as \xNN (core/text.h), other bytes outside printable ASCII as '?'.
std::string comment_text(const std::string& s) {
  std::string out;
  for (unsigned char c : escape_non_utf8(s)) out += (c < 0x20 || c >= 0x7F) ? '?' : static_cast<char>(c);
  for (size_t at = out.find("*/"); at != std::string::npos; at = out.find("*/")) out.replace(at, 2, "* /");
  return out;
}

template <typename... Args>
void append(std::string& text, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(text), format, std::forward<Args>(args)...);
}

int64_t checked_i32(int64_t v, const char* what) {
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    fail("{} {} does not fit the C header's int32_t fields", what, v);
  return v;
}

// One array per bank, each in a linker section of its own that the user's linker script
// places (".memledger.<bank>" into DTCM, PSRAM, ...); buffer offsets are from their bank's base.
void append_banks(std::string& h, const MemoryPlan& plan, const std::string& p, const std::string& P) {
  const BankedPlacement& banked = *plan.banked;
  append(h,
         "/* Memory banks. Offsets in {0}_buffers are from the base of the buffer's bank ({0}_buffer_bank;\n"
         " * -1: outside every bank). Each writable bank is one array in its own linker section\n"
         " * ({1}_BANK_<NAME>_SECTION), which the linker script places in that memory; define\n"
         " * {1}_DEFINE_BANKS in one translation unit to define the arrays. A read-only bank holds the\n"
         " * constants' image, which the program supplies at {0}_bank_<name>. */\n",
         p, P);
  append(h, "#define {}_BANK_COUNT {}\n", P, banked.banks.size());
  std::vector<std::string> ids;
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    const MemoryBank& bank = banked.banks[k];
    const std::string id = identifier_part(bank.name);
    ids.push_back(id);
    const int64_t bytes = checked_i32(plan.banked->solution.banks[k].solution.arena_bytes, "bank size");
    append(h, "#define {}_BANK_{} {}\n", P, upper(id), k);
    append(h, "#define {}_BANK_{}_BYTES {}\n", P, upper(id), bytes);
    append(h, "#define {}_BANK_{}_CAPACITY_BYTES {}\n", P, upper(id), bank.capacity_bytes);
    append(h, "#define {}_BANK_{}_ALIGNMENT {}\n", P, upper(id), bank.alignment_bytes);
    append(h, "#define {}_BANK_{}_SECTION \".memledger.{}\"\n", P, upper(id), id);
  }
  append(h,
         "\ntypedef struct {0}_bank {{\n  const char *name;\n  const char *section;\n  int32_t bytes; /* the plan's "
         "arena in this bank */\n  int32_t capacity;\n  int32_t alignment;\n  int32_t read_only;\n}} {0}_bank;\n\n",
         p);
  append(h, "static const {0}_bank {0}_banks[{1}_BANK_COUNT + 1] {1}_UNUSED = {{\n", p, P);
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    const MemoryBank& bank = banked.banks[k];
    append(h, "  {{{}, {}_BANK_{}_SECTION, {}_BANK_{}_BYTES, {}, {}, {}}},\n", c_string(bank.name), P, upper(ids[k]), P,
           upper(ids[k]), checked_i32(bank.capacity_bytes, "bank capacity"), bank.alignment_bytes,
           bank.read_only ? 1 : 0);
  }
  append(h, "  {{0, 0, 0, 0, 0, 0}} /* end */\n}};\n\n");
  append(h, "static const int32_t {0}_buffer_bank[{1}_BUFFER_COUNT + 1] {1}_UNUSED = {{", p, P);
  for (int bank : banked.bank_of) append(h, "{}, ", bank);
  append(h, "-1}};\n\n");
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    if (banked.banks[k].read_only) {
      append(h, "extern const uint8_t {}_bank_{}[];\n", p, ids[k]);
      continue;
    }
    const std::string size = fmt::format("{0}_BANK_{1}_BYTES > 0 ? {0}_BANK_{1}_BYTES : 1", P, upper(ids[k]));
    append(h,
           "#if defined({0}_DEFINE_BANKS) && defined(__GNUC__)\n"
           "uint8_t {1}_bank_{2}[{3}] __attribute__((section({0}_BANK_{4}_SECTION), aligned({5})));\n"
           "#elif defined({0}_DEFINE_BANKS)\nuint8_t {1}_bank_{2}[{3}];\n#else\nextern uint8_t {1}_bank_{2}[];\n"
           "#endif\n",
           P, p, ids[k], size, upper(ids[k]), banked.banks[k].alignment_bytes);
  }
  append(h, "\n");
}

}  // namespace

CHeaderPatches c_header_patches(const FitPatches& patches) {
  CHeaderPatches out{.rows = patches.spec.rows,
                     .cols = patches.spec.cols,
                     .split = patches.split,
                     .patch_of_step = patches.patch_of_step};
  if (patches.inner_spec) {
    out.inner_rows = patches.inner_spec->rows;
    out.inner_cols = patches.inner_spec->cols;
    out.inner_split = patches.inner_split;
    out.inner_patch_of_step = patches.inner_patch_of_step;
  }
  if (patches.second_spec) {
    out.second_rows = patches.second_spec->rows;
    out.second_cols = patches.second_spec->cols;
    out.second_start = patches.second_start;
    out.second_split = patches.second_split;
    out.second_patch_of_step = patches.second_patch_of_step;
  }
  out.pool_names = patches.pool_names;
  out.pool_strips = patches.pool_strips;
  if (!out.pool_names.empty()) {
    out.pool_pass_of_step = patches.pool_pass_of_step;
    out.pool_strip_of_step = patches.pool_strip_of_step;
  }
  return out;
}

std::string plan_c_header(const Graph& graph, const MemoryPlan& plan, const DeviceProfile& profile,
                          const std::string& model, const CHeaderOptions& options) {
  if (!is_identifier(options.prefix))
    fail("C header prefix '{}' is not a C identifier (letters, digits and '_', not starting with a digit)",
         options.prefix);
  const std::string p = options.prefix, P = upper(options.prefix);
  const Liveness& live = plan.liveness;
  const CHeaderPatches* patches = options.patches;
  const bool inner = patches && patches->inner_rows > 0;
  if (patches)
    ML_CHECK(patches->patch_of_step.size() == live.schedule.size(), "{} patch indices for {} steps",
             patches->patch_of_step.size(), live.schedule.size());
  if (inner)
    ML_CHECK(patches->inner_patch_of_step.size() == live.schedule.size(), "{} inner patch indices for {} steps",
             patches->inner_patch_of_step.size(), live.schedule.size());
  const bool second = patches && patches->second_rows > 0;
  if (second)
    ML_CHECK(patches->second_patch_of_step.size() == live.schedule.size(), "{} second-stage patch indices for {} steps",
             patches->second_patch_of_step.size(), live.schedule.size());
  const bool pools = patches && !patches->pool_names.empty();
  if (pools)
    ML_CHECK(patches->pool_pass_of_step.size() == live.schedule.size() &&
                 patches->pool_strip_of_step.size() == live.schedule.size() &&
                 patches->pool_strips.size() == patches->pool_names.size(),
             "pool passes of {} and {} steps for {} steps", patches->pool_pass_of_step.size(),
             patches->pool_strip_of_step.size(), live.schedule.size());
  checked_i32(plan.arena_bytes, "arena size");

  // Buffer index of each value and each node's workspace.
  std::unordered_map<ValueId, int> buffer_of_value;
  std::unordered_map<NodeId, int> workspace_of;
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    if (b.category == BufferCategory::kWorkspace)
      workspace_of[b.node] = static_cast<int>(i);
    else
      buffer_of_value[b.value] = static_cast<int>(i);
  }

  std::string h;
  const std::string guard = P + "_PLAN_" + upper(identifier_part(std::filesystem::path(model).stem().string())) + "_H";
  append(h, "/* memledger {} plan of {} on device '{}' (generated: do not edit).\n", kVersion, comment_text(model),
         comment_text(profile.name));
  append(h,
         " *\n * {} buffers, {} steps. The arena is {} B (peak-live {} B); its base must be aligned to\n"
         " * {} B. Offsets are bytes from the arena's base (-1: kept outside the arena, as external weights\n * in "
         "flash or an input in its own buffer); an in-place output has its input's offset\n"
         " * (alias_of names that buffer). Buffers live over [first_step, last_step] of the schedule.\n",
         live.buffers.size(), live.steps(), plan.arena_bytes, plan.ledger.peak_live_bytes, profile.alignment_bytes);
  if (patches)
    append(h,
           " * Steps with patch >= 0 run the {}x{} patches of the stage ending in '{}', patch by patch\n"
           " * (patch = row * {} + col); {}_patches gives each patch's steps.\n",
           patches->rows, patches->cols, comment_text(patches->split), patches->cols, p);
  if (inner)
    append(h,
           " * Patches of patches: inside each outer patch, the part of the stage ending in '{2}' runs as\n"
           " * a {0}x{1} grid of its own; steps with inner_patch >= 0 belong to inner patch row * {1} + col.\n"
           " * The steps' order is the order to run them in.\n",
           patches->inner_rows, patches->inner_cols, comment_text(patches->inner_split));
  if (second)
    append(h,
           " * A second stage then runs patch by patch: the {}x{} patches of the stage from '{}' to '{}';\n"
           " * steps with second_patch >= 0 belong to its patch row * {} + col.\n",
           patches->second_rows, patches->second_cols, comment_text(patches->split),
           comment_text(patches->second_split), patches->second_cols);
  if (pools)
    append(h,
           " * Global pools inside the stages (squeeze-and-excitation blocks) run first, one pass each:\n"
           " * row strips of the stage up to the pool's input, each added into the pooled sums in order\n"
           " * (memledger.AccumulatePool); steps with pool_pass >= 0 belong to strip pool_strip of that\n"
           " * pass, and {}_pool_passes gives each pass's pooled buffer and steps.\n",
           p);
  append(h, " */\n#ifndef {0}\n#define {0}\n\n#include <stdint.h>\n\n", guard);
  append(h, "#if defined(__GNUC__)\n#define {0}_UNUSED __attribute__((unused))\n#else\n#define {0}_UNUSED\n#endif\n\n",
         P);

  append(h, "#define {}_ARENA_BYTES {}\n", P, plan.arena_bytes);
  append(h, "#define {}_ARENA_ALIGNMENT {}\n", P, profile.alignment_bytes);
  append(h, "#define {}_PEAK_LIVE_BYTES {}\n", P, plan.ledger.peak_live_bytes);
  append(h, "#define {}_CAPACITY_BYTES {} /* 0: unlimited */\n", P, profile.capacity_bytes);
  append(h, "#define {}_BUFFER_COUNT {}\n", P, live.buffers.size());
  append(h, "#define {}_STEP_COUNT {}\n", P, live.steps());

  // Patch grid and per-patch step ranges.
  struct PatchRange {
    int first = -1, last = -1;
  };
  std::vector<PatchRange> ranges;
  bool contiguous = true;
  if (patches) {
    ranges.resize(static_cast<size_t>(patches->rows * patches->cols));
    for (int s = 0; s < live.steps(); ++s) {
      const int patch = patches->patch_of_step[static_cast<size_t>(s)];
      if (patch < 0) continue;
      ML_CHECK(patch < static_cast<int>(ranges.size()), "patch {} outside a {}x{} grid", patch, patches->rows,
               patches->cols);
      PatchRange& r = ranges[static_cast<size_t>(patch)];
      if (r.first < 0) r.first = s;
      if (r.last >= 0 && r.last != s - 1) contiguous = false;
      r.last = s;
    }
  }
  append(h, "#define {}_PATCH_ROWS {}\n", P, patches ? patches->rows : 0);
  append(h, "#define {}_PATCH_COLS {}\n", P, patches ? patches->cols : 0);
  append(h, "#define {}_PATCH_COUNT {}\n", P, ranges.size());
  append(h, "#define {}_INNER_PATCH_ROWS {} /* 0: no patches of patches */\n", P, inner ? patches->inner_rows : 0);
  append(h, "#define {}_INNER_PATCH_COLS {}\n", P, inner ? patches->inner_cols : 0);
  append(h, "#define {}_SECOND_PATCH_ROWS {} /* 0: no second patched stage */\n", P, second ? patches->second_rows : 0);
  append(h, "#define {}_SECOND_PATCH_COLS {}\n", P, second ? patches->second_cols : 0);
  append(h, "#define {}_POOL_PASS_COUNT {} /* 0: no pool passes */\n", P, pools ? patches->pool_names.size() : 0);
  append(h, "/* 1 when each patch's steps are one contiguous run of the schedule */\n");
  append(h, "#define {}_PATCH_STEPS_CONTIGUOUS {}\n\n", P, contiguous ? 1 : 0);

  append(h,
         "enum {1}_category {{ {0}_INPUT = 0, {0}_OUTPUT = 1, {0}_ACTIVATION = 2, {0}_CONSTANT = 3, {0}_WORKSPACE = 4 "
         "}};\n\n",
         P, p);
  // Buffer indices by name, deduplicated after mangling.
  append(h, "/* Buffer indices into {}_buffers. */\nenum {{\n", p);
  std::set<std::string> taken;
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    std::string id = P + "_BUF_" + identifier_part(live.buffers[i].name);
    for (int n = 2; !taken.insert(id).second; ++n)
      id = fmt::format("{}_BUF_{}_{}", P, identifier_part(live.buffers[i].name), n);
    append(h, "  {} = {},\n", id, i);
  }
  append(h, "  {}_BUF_END_ = {}\n}};\n\n", P, live.buffers.size());

  append(h,
         "typedef struct {0}_buffer {{\n"
         "  const char *name;\n"
         "  int32_t offset;     /* bytes from the arena base; -1: outside the arena (external) */\n"
         "  int32_t bytes;      /* physical bytes under the device's layout */\n"
         "  int32_t category;   /* enum {0}_category */\n"
         "  int32_t first_step; /* live over [first_step, last_step] */\n"
         "  int32_t last_step;\n"
         "  int32_t alias_of;   /* the buffer whose bytes it takes (in place), or -1 */\n"
         "}} {0}_buffer;\n\n",
         p);
  auto category_name = [&](BufferCategory c) { return P + "_" + upper(std::string(to_string(c))); };
  append(h, "static const {0}_buffer {0}_buffers[{1}_BUFFER_COUNT + 1] {1}_UNUSED = {{\n", p, P);
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    append(h, "  {{{}, {}, {}, {}, {}, {}, {}}},\n", c_string(b.name), checked_i32(plan.offsets[i], "offset"),
           checked_i32(b.physical_bytes, "buffer size"), category_name(b.category), b.first_step, b.last_step,
           b.alias_of ? *b.alias_of : -1);
  }
  append(h, "  {{0, 0, 0, 0, 0, 0, -1}} /* end */\n}};\n\n");
  if (plan.banked) append_banks(h, plan, p, P);

  // Steps and their buffers.
  std::vector<int> io;
  append(h,
         "typedef struct {0}_step {{\n"
         "  const char *node; /* its name (its operator when it has none), as in the JSON timeline */\n"
         "  const char *op;   /* domain.op for operators outside ONNX's default domain */\n"
         "  int32_t patch;    /* the patch this step belongs to (row * {1}_PATCH_COLS + col), or -1 */\n"
         "  int32_t inner_patch; /* its inner patch (row * {1}_INNER_PATCH_COLS + col), or -1 */\n"
         "  int32_t second_patch; /* its patch of the second stage (row * {1}_SECOND_PATCH_COLS + col), or -1 */\n"
         "  int32_t pool_pass;  /* the pool pass it belongs to, or -1 */\n"
         "  int32_t pool_strip; /* its row strip of that pass, or -1 */\n"
         "  int32_t first_io; /* its inputs, then its outputs, in {0}_step_io[first_io...] */\n"
         "  int32_t inputs;\n"
         "  int32_t outputs;\n"
         "  int32_t workspace; /* buffer index, or -1 */\n"
         "}} {0}_step;\n\n",
         p, P);
  append(h, "static const {0}_step {0}_steps[{1}_STEP_COUNT + 1] {1}_UNUSED = {{\n", p, P);
  for (int s = 0; s < live.steps(); ++s) {
    const NodeId id = live.schedule[static_cast<size_t>(s)];
    const Node& node = graph.node(id);
    const int first = static_cast<int>(io.size());
    auto add = [&](ValueId v) {
      auto it = v.valid() ? buffer_of_value.find(v) : buffer_of_value.end();
      io.push_back(it == buffer_of_value.end() ? -1 : it->second);
    };
    for (ValueId v : node.inputs) add(v);
    for (ValueId v : node.outputs) add(v);
    const auto ws = workspace_of.find(id);
    const std::string op = node.domain.empty() || node.domain == "ai.onnx" ? node.op : node.domain + "." + node.op;
    append(h, "  {{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}},\n", c_string(node.name.empty() ? node.op : node.name),
           c_string(op), patches ? patches->patch_of_step[static_cast<size_t>(s)] : -1,
           inner ? patches->inner_patch_of_step[static_cast<size_t>(s)] : -1,
           second ? patches->second_patch_of_step[static_cast<size_t>(s)] : -1,
           pools ? patches->pool_pass_of_step[static_cast<size_t>(s)] : -1,
           pools ? patches->pool_strip_of_step[static_cast<size_t>(s)] : -1, first, node.inputs.size(),
           node.outputs.size(), ws == workspace_of.end() ? -1 : ws->second);
  }
  append(h, "  {{0, 0, -1, -1, -1, -1, -1, 0, 0, 0, -1}} /* end */\n}};\n\n");
  append(h, "/* Per step: its inputs' buffer indices, then its outputs' (-1: an omitted optional one). */\n");
  append(h, "static const int32_t {0}_step_io[{1}] {2}_UNUSED = {{", p, io.size() + 1, P);
  for (size_t i = 0; i < io.size(); ++i) append(h, "{}{},", i % 16 == 0 ? "\n  " : " ", io[i]);
  append(h, "\n  -1 /* end */\n}};\n\n");

  append(h,
         "typedef struct {0}_patch {{\n  int32_t row, col;\n  int32_t first_step, last_step; /* -1 when it has no "
         "steps */\n}} {0}_patch;\n",
         p);
  append(h, "static const {0}_patch {0}_patches[{1}_PATCH_COUNT + 1] {1}_UNUSED = {{\n", p, P);
  for (size_t i = 0; i < ranges.size(); ++i)
    append(h, "  {{{}, {}, {}, {}}},\n", static_cast<int>(i) / patches->cols, static_cast<int>(i) % patches->cols,
           ranges[i].first, ranges[i].last);
  append(h, "  {{-1, -1, -1, -1}} /* end */\n}};\n\n");

  // Pool passes: the pooled buffer, the strips and the steps of each.
  std::vector<PatchRange> pass_ranges(pools ? patches->pool_names.size() : 0);
  for (int s = 0; pools && s < live.steps(); ++s) {
    const int pass = patches->pool_pass_of_step[static_cast<size_t>(s)];
    if (pass < 0) continue;
    ML_CHECK(pass < static_cast<int>(pass_ranges.size()), "pool pass {} of {}", pass, pass_ranges.size());
    PatchRange& r = pass_ranges[static_cast<size_t>(pass)];
    if (r.first < 0) r.first = s;
    r.last = s;
  }
  std::unordered_map<std::string, int> buffer_named;
  for (size_t i = 0; i < live.buffers.size(); ++i) buffer_named.emplace(live.buffers[i].name, static_cast<int>(i));
  append(h,
         "typedef struct {0}_pool_pass {{\n  int32_t pooled; /* the buffer of the pooled value */\n  int32_t strips;\n"
         "  int32_t first_step, last_step;\n}} {0}_pool_pass;\n",
         p);
  append(h, "static const {0}_pool_pass {0}_pool_passes[{1}_POOL_PASS_COUNT + 1] {1}_UNUSED = {{\n", p, P);
  for (size_t i = 0; i < pass_ranges.size(); ++i) {
    const auto it = buffer_named.find(patches->pool_names[i]);
    append(h, "  {{{}, {}, {}, {}}}, /* {} */\n", it == buffer_named.end() ? -1 : it->second, patches->pool_strips[i],
           pass_ranges[i].first, pass_ranges[i].last, comment_text(patches->pool_names[i]));
  }
  append(h, "  {{-1, 0, -1, -1}} /* end */\n}};\n\n#endif /* {} */\n", guard);
  return h;
}

}  // namespace memledger
