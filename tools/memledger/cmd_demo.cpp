// `memledger demo`: the teaching example's story, every figure computed by the library.
#include <fmt/format.h>

#include <algorithm>

#include "commands.h"
#include "device_option.h"
#include "memledger/core/output_file.h"
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

namespace memledger::cli {
namespace {

void row(std::string_view label, int64_t a, int64_t b, std::string_view unit, const std::string& why) {
  fmt::print("  {:<44} {:>6} / {:<6} {}\n", label, a, b, unit);
  // One line per part of the arithmetic, indented under the figures.
  size_t start = 0;
  while (start <= why.size()) {
    const size_t end = std::min(why.find("; ", start), why.size());
    fmt::print("      {}\n", why.substr(start, end - start));
    start = end + 2;
  }
}

void print_layout_story(const DeviceProfile& profile) {
  const auto f = teaching::layout_figures(profile);
  const Shape x = teaching::input_shape();
  fmt::print("The model: x{} ({}), y = x·scale[c] + bias[c], a per-channel affine.\n\n", shape_to_string(x),
             roles_to_string(teaching::input_roles()));

  fmt::print("1. Broadcast is an address rule, not a copy\n");
  row("parameter elements, compact / expanded", f.parameter_elements_compact, f.parameter_elements_expanded, "elements",
      fmt::format("2 × C = 2 × {} kept per channel; 2 × N·C·H·W = 2 × {} once expanded ({}× more)", x[1],
                  f.parameter_elements_expanded / 2, f.parameter_elements_expanded / f.parameter_elements_compact));
  fmt::print("\n2. Logical size is not physical size (one layout contract for size and address)\n");
  row("x (and y) logical / physical", f.x.logical_bytes(), f.x.bytes(), "bytes",
      fmt::format("{} elements × {} bits; {} in {}", f.x.elements(), f.x.element_bits(), f.x.explain_bytes(),
                  f.x.physical_order_name()));
  row("scale (or bias) compact / expanded", f.parameter_compact.bytes(), f.parameter_expanded.bytes(), "bytes",
      fmt::format("compact {}: {}; expanded: {}", shape_to_string(f.parameter_compact.shape()),
                  f.parameter_compact.explain_bytes(), f.parameter_expanded.explain_bytes()));
  fmt::print("\n3. C = 1: a row rule or a pixel rule\n");
  row("x with C = 1, row rule / pixel rule", f.c1_row_rule.bytes(), f.c1_pixel_rule.bytes(), "bytes",
      fmt::format("row rule: {}; pixel rule: {}", f.c1_row_rule.explain_bytes(), f.c1_pixel_rule.explain_bytes()));
  fmt::print("\n4. Sub-byte types: count bits, then round to bytes, then align\n");
  row("int4, C = 1: packed / per-element rounding", f.int4_c1_packed.bytes(), f.int4_c1_per_element.bytes(), "bytes",
      fmt::format("packed: {}; rounding each element to a byte: {}", f.int4_c1_packed.explain_bytes(),
                  f.int4_c1_per_element.explain_bytes()));
  row("int4, C = 12: logical / physical", f.int4_c12.logical_bytes(), f.int4_c12.bytes(), "bytes",
      fmt::format("{} elements × 4 bits; {}", f.int4_c12.elements(), f.int4_c12.explain_bytes()));
}

void print_plan_story(const DeviceProfile& profile) {
  fmt::print("\n5. Peak memory is what is live at the same instant\n");
  fmt::print("   One fused per-channel affine, planned four ways under '{}':\n", profile.name);
  std::vector<std::pair<char, MemoryPlan>> plans;
  for (const auto& variant : teaching::affine_variants()) {
    const MemoryPlan plan = plan_memory(variant.graph, profile, variant.options);
    fmt::print("\n   {}. {}: {}\n", variant.letter, variant.title, variant.story);
    fmt::print("{}", buffer_table(plan));
    fmt::print("{}", timeline_text(plan, 10));
    fmt::print("   → {}\n", plan_verdict(plan));
    plans.emplace_back(variant.letter, plan);
  }
  fmt::print("\n   {:<9} {:>12} {:>10}  {}\n", "variant", "peak-live", "arena", "verdict");
  for (const auto& [letter, plan] : plans)
    fmt::print("   {:<9} {:>12} {:>10}  {}\n", letter, plan.ledger.peak_live_bytes, plan.arena_bytes,
               plan.fits ? "fits" : fmt::format("does not fit in {}", plan.capacity_bytes));

  fmt::print("\n6. The model a user brings: Mul + Add with scale and bias stored at x's full shape\n");
  const MemoryPlan expanded = plan_memory(teaching::expanded_mul_add_model(), profile);
  fmt::print("{}", buffer_table(expanded));
  fmt::print("{}", timeline_text(expanded, 10));
  fmt::print("   → {}\n", plan_verdict(expanded));
  const auto& constants = expanded.ledger.by_category.at(BufferCategory::kConstant);
  fmt::print(
      "   The two expanded constants alone hold {} of physical memory for {} of values; kept compact they "
      "would hold {} B.\n",
      human_bytes(constants.physical_bytes), human_bytes(constants.logical_bytes),
      2 * teaching::layout_figures(profile).parameter_compact.bytes());
}

struct ReportArgs {
  std::string html_path, json_path, compare_html_path;
  std::string variant = "expanded";
};

// `--html`/`--json`: the report of one plan of the teaching example, as `plan` writes it
// for a model file; `--compare-html`: the model a user brings beside variant C, as
// `optimize --html` shows a rewrite.
void write_reports(const ReportArgs& args, const DeviceProfile& profile, OutputSet& outputs) {
  const Graph expanded_graph = teaching::expanded_mul_add_model();
  const MemoryPlan expanded_plan = plan_memory(expanded_graph, profile);
  const std::string expanded_name = "teaching: Mul + Add, expanded constants";
  const auto variants = teaching::affine_variants();
  const auto find_variant = [&](char letter) -> const teaching::Variant& {
    for (const auto& v : variants)
      if (v.letter == letter) return v;
    fail("the teaching example has no variant {}", letter);
  };

  if (!args.html_path.empty() || !args.json_path.empty()) {
    // expanded: the model a user brings; optimized: that model after `optimize`, as the
    // file holds it (section 8); A–D: the plan variants.
    const bool expanded = args.variant == "expanded", optimized = args.variant == "optimized";
    const teaching::Variant* variant = expanded || optimized ? nullptr : &find_variant(args.variant[0]);
    const Graph graph = expanded ? expanded_graph : optimized ? optimize_graph(expanded_graph).graph : variant->graph;
    const MemoryPlan plan = expanded    ? expanded_plan
                            : optimized ? plan_memory(graph, profile)
                                        : plan_memory(variant->graph, profile, variant->options);
    const std::string name = expanded    ? expanded_name
                             : optimized ? std::string("teaching: Mul + Add after optimize")
                                         : fmt::format("teaching {}: {}", variant->letter, variant->title);
    if (!args.html_path.empty()) outputs.stage(args.html_path, plan_report_html(graph, plan, profile, name));
    if (!args.json_path.empty()) outputs.stage(args.json_path, plan_report_json(graph, plan, profile, name));
  }
  if (!args.compare_html_path.empty()) {
    const teaching::Variant& c = find_variant('C');
    const MemoryPlan c_plan = plan_memory(c.graph, profile, c.options);
    outputs.stage(args.compare_html_path,
                  compare_report_html({expanded_graph, expanded_plan, profile, expanded_name},
                                      {c.graph, c_plan, profile, fmt::format("teaching C: {}", c.title)}));
  }
  outputs.commit();
  for (size_t i = 0; i < outputs.committed().size(); ++i)
    fmt::print("{}wrote {}\n", i == 0 ? "\n" : "", outputs.committed()[i].string());
}

void print_traffic_story(const DeviceProfile& profile) {
  if (profile.dma.external_bytes <= 0 || profile.unlimited()) return;
  fmt::print("\n7. Traffic matters as much as capacity (NPU mode: tiles in local memory, DMA from external)\n");
  for (const auto& v : teaching::affine_variants()) {
    if (v.letter != 'A' && v.letter != 'B') continue;
    const sim::SimReport r = sim::simulate(v.graph, profile);
    fmt::print(
        "   {}. parameters moved: compact {} B, expanded {} B; all traffic {} B in {} transfers, {:.0f} cycles "
        "(×{:.3f} the ideal)\n",
        v.letter, r.compact_parameters.bytes, r.expanded_parameters.bytes, r.total().bytes, r.total().transfers,
        r.total().cycles, r.cycles_ratio());
  }
  fmt::print(
      "   Expanded parameters move N·C·H·W elements with every tile; compact ones move C once and are reused.\n");
}

// What `optimize` does to the model a user brings, through the same library calls: the
// passes, the verification, and the ledger diff with its parts.
void print_rewrite_story(const DeviceProfile& profile) {
  fmt::print("\n8. The rewrite: `memledger optimize` on the model a user brings (section 6)\n");
  const Graph before = teaching::expanded_mul_add_model();
  const OptimizeResult r = optimize_graph(before);
  fmt::print("   {:<22} {:>8} {:>14}\n", "pass", "rewrote", "bytes saved");
  int64_t saved = 0;
  for (const PipelineStep& s : r.steps) {
    fmt::print("   {:<22} {:>8} {:>14}\n", s.pass, s.result.nodes_rewritten, s.result.bytes_saved);
    saved += s.result.bytes_saved;
  }
  fmt::print("   nodes {} → {} as written ({} Affine lowered to Mul + Add); constant bytes saved {}\n",
             before.order().size(), r.graph.order().size(), r.lowered, saved);
  fmt::print("   model file {} B → {} B\n", export_onnx_bytes(before).size(), export_onnx_bytes(r.graph).size());
  fmt::print("   verification (seed 1, rtol {}): {}, max|diff| {:.3g}\n", OptimizeOptions{}.verify.rtol,
             r.verification.ok ? "same numbers" : "DIFFERENT NUMBERS", r.verification.max_abs);
  for (const OutputCheck& o : r.verification.outputs)
    fmt::print("     output '{}': {}\n", o.name, o.difference.describe());

  const PlacementOptions placement{.algorithm = allocate::Algorithm::kGreedy};
  const MemoryPlan after_plan = plan_memory(r.graph, profile, {}, placement);
  const ReportDiff d = diff_plans(plan_memory(before, profile, {}, placement), after_plan);
  fmt::print("\n   The ledger diff under '{}' (as `memledger diff` prints it):\n", profile.name);
  std::string table = format_diff(d);
  for (size_t start = 0; start < table.size();) {
    const size_t end = table.find('\n', start);
    fmt::print("   {}\n", table.substr(start, end - start));
    start = end + 1;
  }
  const auto parts = [](const char* name, const FigureChange& c) {
    fmt::print("   {:<9} {} → {}: constants {:+} + layout/padding {:+} + lifetimes {:+} = {:+}\n", name, c.before,
               c.after, c.constants, c.layout, c.lifetimes, c.constants + c.layout + c.lifetimes);
  };
  parts("logical", d.logical);
  parts("physical", d.physical);
  parts("peak-live", d.peak_live);
  // Which written buffers own no bytes: the in-place outputs of the plan.
  for (const LiveBuffer& buffer : after_plan.liveness.buffers)
    if (buffer.alias_of)
      fmt::print("   In the file, '{}' is written over '{}' (in place): the Mul's product costs no bytes of its own.\n",
                 buffer.name, after_plan.liveness.buffers[static_cast<size_t>(*buffer.alias_of)].name);
}

}  // namespace

void register_demo(CLI::App& app, int& /*exit_code*/) {
  auto* command = app.add_subcommand("demo", "the teaching example: layouts, ledgers, plans and rewrites, explained");
  auto device = std::make_shared<std::string>();
  add_device_option(command, *device, "teaching");
  auto reports = std::make_shared<ReportArgs>();
  command->add_option("--html", reports->html_path, "write the HTML report of one plan (see --variant)");
  command->add_option("--json", reports->json_path, "write the JSON report of the same plan");
  command
      ->add_option("--variant", reports->variant,
                   "the plan --html/--json show: expanded, optimized (after `optimize`), A, B, C or D")
      ->check(CLI::IsMember({"expanded", "optimized", "A", "B", "C", "D"}))
      ->capture_default_str();
  command->add_option("--compare-html", reports->compare_html_path,
                      "write the expanded model beside variant C as one HTML page");
  command->callback([device, reports] {
    OutputSet outputs;
    protect_device_file(outputs, *device);
    if (!reports->html_path.empty()) outputs.declare(reports->html_path, "--html");
    if (!reports->json_path.empty()) outputs.declare(reports->json_path, "--json");
    if (!reports->compare_html_path.empty()) outputs.declare(reports->compare_html_path, "--compare-html");
    const DeviceProfile profile = device_from_flag(*device);
    fmt::print("memledger demo: the teaching example (DESIGN.md §5)\n");
    fmt::print("device: {}\n\n", describe_profile(profile));
    print_layout_story(profile);
    print_plan_story(profile);
    print_traffic_story(profile);
    print_rewrite_story(profile);
    write_reports(*reports, profile, outputs);
  });
}

}  // namespace memledger::cli
