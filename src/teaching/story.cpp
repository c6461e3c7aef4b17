#include "memledger/teaching/story.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "memledger/core/error.h"
#include "memledger/onnx/export.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/report/diff.h"
#include "memledger/report/html_report.h"
#include "memledger/report/json_report.h"
#include "memledger/report/text_report.h"
#include "memledger/report/units.h"
#include "memledger/sim/simulate.h"
#include "memledger/teaching/example.h"
#include "memledger/teaching/variants.h"
#include "memledger/verify/optimize.h"

namespace memledger::teaching {
namespace {

void row(std::string& out, std::string_view label, int64_t a, int64_t b, std::string_view unit,
         const std::string& why) {
  fmt::format_to(std::back_inserter(out), "  {:<44} {:>6} / {:<6} {}\n", label, a, b, unit);
  // One line per part of the arithmetic, indented under the figures.
  size_t start = 0;
  while (start <= why.size()) {
    const size_t end = std::min(why.find("; ", start), why.size());
    fmt::format_to(std::back_inserter(out), "      {}\n", why.substr(start, end - start));
    start = end + 2;
  }
}

void layout_story(std::string& out, const DeviceProfile& profile) {
  const auto f = teaching::layout_figures(profile);
  const Shape x = teaching::input_shape();
  fmt::format_to(std::back_inserter(out), "The model: x{} ({}), y = x·scale[c] + bias[c], a per-channel affine.\n\n",
                 shape_to_string(x), roles_to_string(teaching::input_roles()));

  fmt::format_to(std::back_inserter(out), "1. Broadcast is an address rule, not a copy\n");
  row(out, "parameter elements, compact / expanded", f.parameter_elements_compact, f.parameter_elements_expanded,
      "elements",
      fmt::format("2 × C = 2 × {} kept per channel; 2 × N·C·H·W = 2 × {} once expanded ({}× more)", x[1],
                  f.parameter_elements_expanded / 2, f.parameter_elements_expanded / f.parameter_elements_compact));
  fmt::format_to(std::back_inserter(out),
                 "\n2. Logical size is not physical size (one layout contract for size and address)\n");
  row(out, "x (and y) logical / physical", f.x.logical_bytes(), f.x.bytes(), "bytes",
      fmt::format("{} elements × {} bits; {} in {}", f.x.elements(), f.x.element_bits(), f.x.explain_bytes(),
                  f.x.physical_order_name()));
  row(out, "scale (or bias) compact / expanded", f.parameter_compact.bytes(), f.parameter_expanded.bytes(), "bytes",
      fmt::format("compact {}: {}; expanded: {}", shape_to_string(f.parameter_compact.shape()),
                  f.parameter_compact.explain_bytes(), f.parameter_expanded.explain_bytes()));
  fmt::format_to(std::back_inserter(out), "\n3. C = 1: a row rule or a pixel rule\n");
  row(out, "x with C = 1, row rule / pixel rule", f.c1_row_rule.bytes(), f.c1_pixel_rule.bytes(), "bytes",
      fmt::format("row rule: {}; pixel rule: {}", f.c1_row_rule.explain_bytes(), f.c1_pixel_rule.explain_bytes()));
  fmt::format_to(std::back_inserter(out), "\n4. Sub-byte types: count bits, then round to bytes, then align\n");
  row(out, "int4, C = 1: packed / per-element rounding", f.int4_c1_packed.bytes(), f.int4_c1_per_element.bytes(),
      "bytes",
      fmt::format("packed: {}; rounding each element to a byte: {}", f.int4_c1_packed.explain_bytes(),
                  f.int4_c1_per_element.explain_bytes()));
  row(out, "int4, C = 12: logical / physical", f.int4_c12.logical_bytes(), f.int4_c12.bytes(), "bytes",
      fmt::format("{} elements × 4 bits; {}", f.int4_c12.elements(), f.int4_c12.explain_bytes()));
}

void plan_story(std::string& out, const DeviceProfile& profile) {
  fmt::format_to(std::back_inserter(out), "\n5. Peak memory is what is live at the same instant\n");
  fmt::format_to(std::back_inserter(out), "   One fused per-channel affine, planned four ways under '{}':\n",
                 profile.name);
  std::vector<std::pair<char, MemoryPlan>> plans;
  for (const auto& variant : teaching::affine_variants()) {
    const MemoryPlan plan = plan_memory(variant.graph, profile, variant.options);
    fmt::format_to(std::back_inserter(out), "\n   {}. {}: {}\n", variant.letter, variant.title, variant.story);
    fmt::format_to(std::back_inserter(out), "{}", buffer_table(plan));
    fmt::format_to(std::back_inserter(out), "{}", timeline_text(plan, 10));
    fmt::format_to(std::back_inserter(out), "   → {}\n", plan_verdict(plan));
    plans.emplace_back(variant.letter, plan);
  }
  fmt::format_to(std::back_inserter(out), "\n   {:<9} {:>12} {:>10}  {}\n", "variant", "peak-live", "arena", "verdict");
  for (const auto& [letter, plan] : plans)
    fmt::format_to(std::back_inserter(out), "   {:<9} {:>12} {:>10}  {}\n", letter, plan.ledger.peak_live_bytes,
                   plan.arena_bytes, plan.fits ? "fits" : fmt::format("does not fit in {}", plan.capacity_bytes));

  fmt::format_to(std::back_inserter(out),
                 "\n6. The model a user brings: Mul + Add with scale and bias stored at x's full shape\n");
  const MemoryPlan expanded = plan_memory(teaching::expanded_mul_add_model(), profile);
  fmt::format_to(std::back_inserter(out), "{}", buffer_table(expanded));
  fmt::format_to(std::back_inserter(out), "{}", timeline_text(expanded, 10));
  fmt::format_to(std::back_inserter(out), "   → {}\n", plan_verdict(expanded));
  const auto& constants = expanded.ledger.by_category.at(BufferCategory::kConstant);
  fmt::format_to(std::back_inserter(out),
                 "   The two expanded constants alone hold {} of physical memory for {} of values; kept compact they "
                 "would hold {} B.\n",
                 human_bytes(constants.physical_bytes), human_bytes(constants.logical_bytes),
                 2 * teaching::layout_figures(profile).parameter_compact.bytes());
}

void traffic_story(std::string& out, const DeviceProfile& profile) {
  if (profile.dma.external_bytes <= 0 || profile.unlimited()) return;
  fmt::format_to(std::back_inserter(out),
                 "\n7. Traffic matters as much as capacity (NPU mode: tiles in local memory, DMA from external)\n");
  for (const auto& v : teaching::affine_variants()) {
    if (v.letter != 'A' && v.letter != 'B') continue;
    const sim::SimReport r = sim::simulate(v.graph, profile);
    fmt::format_to(
        std::back_inserter(out),
        "   {}. parameters moved: compact {} B, expanded {} B; all traffic {} B in {} transfers, {:.0f} cycles "
        "(×{:.3f} the ideal)\n",
        v.letter, r.compact_parameters.bytes, r.expanded_parameters.bytes, r.total().bytes, r.total().transfers,
        r.total().cycles, r.cycles_ratio());
  }
  fmt::format_to(
      std::back_inserter(out),
      "   Expanded parameters move N·C·H·W elements with every tile; compact ones move C once and are reused.\n");
}

// What `optimize` does to the model a user brings, through the same library calls: the
// passes, the verification, and the ledger diff with its parts.
void rewrite_story(std::string& out, const DeviceProfile& profile) {
  fmt::format_to(std::back_inserter(out),
                 "\n8. The rewrite: `memledger optimize` on the model a user brings (section 6)\n");
  const Graph before = teaching::expanded_mul_add_model();
  const OptimizeResult r = optimize_graph(before);
  fmt::format_to(std::back_inserter(out), "   {:<22} {:>8} {:>14}\n", "pass", "rewrote", "bytes saved");
  int64_t saved = 0;
  for (const PipelineStep& s : r.steps) {
    fmt::format_to(std::back_inserter(out), "   {:<22} {:>8} {:>14}\n", s.pass, s.result.nodes_rewritten,
                   s.result.bytes_saved);
    saved += s.result.bytes_saved;
  }
  fmt::format_to(std::back_inserter(out),
                 "   nodes {} → {} as written ({} Affine lowered to Mul + Add); constant bytes saved {}\n",
                 before.order().size(), r.graph.order().size(), r.lowered, saved);
  fmt::format_to(std::back_inserter(out), "   model file {} B → {} B\n", export_onnx_bytes(before).size(),
                 export_onnx_bytes(r.graph).size());
  fmt::format_to(std::back_inserter(out), "   verification (seed 1, rtol {}): {}, max|diff| {:.3g}\n",
                 OptimizeOptions{}.verify.rtol, r.verification.ok ? "same numbers" : "DIFFERENT NUMBERS",
                 r.verification.max_abs);
  for (const OutputCheck& o : r.verification.outputs)
    fmt::format_to(std::back_inserter(out), "     output '{}': {}\n", o.name, o.difference.describe());

  const PlacementOptions placement{.algorithm = allocate::Algorithm::kGreedy};
  const MemoryPlan after_plan = plan_memory(r.graph, profile, {}, placement);
  const ReportDiff d = diff_plans(plan_memory(before, profile, {}, placement), after_plan);
  fmt::format_to(std::back_inserter(out), "\n   The ledger diff under '{}' (as `memledger diff` prints it):\n",
                 profile.name);
  std::string table = format_diff(d);
  for (size_t start = 0; start < table.size();) {
    const size_t end = table.find('\n', start);
    fmt::format_to(std::back_inserter(out), "   {}\n", table.substr(start, end - start));
    start = end + 1;
  }
  const auto parts = [&out](const char* name, const FigureChange& c) {
    fmt::format_to(std::back_inserter(out),
                   "   {:<9} {} → {}: constants {:+} + layout/padding {:+} + lifetimes {:+} = {:+}\n", name, c.before,
                   c.after, c.constants, c.layout, c.lifetimes, c.constants + c.layout + c.lifetimes);
  };
  parts("logical", d.logical);
  parts("physical", d.physical);
  parts("peak-live", d.peak_live);
  // Which written buffers own no bytes: the in-place outputs of the plan.
  for (const LiveBuffer& buffer : after_plan.liveness.buffers)
    if (buffer.alias_of)
      fmt::format_to(
          std::back_inserter(out),
          "   In the file, '{}' is written over '{}' (in place): the Mul's product costs no bytes of its own.\n",
          buffer.name, after_plan.liveness.buffers[static_cast<size_t>(*buffer.alias_of)].name);
}

const Variant& find_variant(const std::vector<Variant>& variants, char letter) {
  for (const auto& v : variants)
    if (v.letter == letter) return v;
  fail("the teaching example has no variant {}", letter);
}

// The graph, plan and title of the plan `variant` names.
struct NamedPlan {
  Graph graph;
  MemoryPlan plan;
  std::string name;
};
NamedPlan named_plan(const std::string& variant, const DeviceProfile& profile) {
  const Graph expanded = expanded_mul_add_model();
  if (variant == "expanded")
    return {expanded, plan_memory(expanded, profile), "teaching: Mul + Add, expanded constants"};
  if (variant == "optimized") {
    Graph optimized = optimize_graph(expanded).graph;
    MemoryPlan plan = plan_memory(optimized, profile);
    return {std::move(optimized), std::move(plan), "teaching: Mul + Add after optimize"};
  }
  if (variant.size() != 1) fail("the teaching example has no variant '{}'", variant);
  const auto variants = affine_variants();
  const Variant& v = find_variant(variants, variant[0]);
  return {v.graph, plan_memory(v.graph, profile, v.options), fmt::format("teaching {}: {}", v.letter, v.title)};
}

}  // namespace

std::string story_text(const DeviceProfile& profile) {
  std::string out;
  layout_story(out, profile);
  plan_story(out, profile);
  traffic_story(out, profile);
  rewrite_story(out, profile);
  return out;
}

std::string variant_report_html(const std::string& variant, const DeviceProfile& profile) {
  const NamedPlan p = named_plan(variant, profile);
  return plan_report_html(p.graph, p.plan, profile, p.name);
}

std::string variant_report_json(const std::string& variant, const DeviceProfile& profile) {
  const NamedPlan p = named_plan(variant, profile);
  return plan_report_json(p.graph, p.plan, profile, p.name);
}

std::string compare_report_html(const DeviceProfile& profile) {
  const Graph expanded = expanded_mul_add_model();
  const MemoryPlan expanded_plan = plan_memory(expanded, profile);
  const auto variants = affine_variants();
  const Variant& c = find_variant(variants, 'C');
  const MemoryPlan c_plan = plan_memory(c.graph, profile, c.options);
  return memledger::compare_report_html({expanded, expanded_plan, profile, "teaching: Mul + Add, expanded constants"},
                                        {c.graph, c_plan, profile, fmt::format("teaching C: {}", c.title)});
}

}  // namespace memledger::teaching
