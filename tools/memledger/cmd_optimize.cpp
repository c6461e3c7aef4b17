// `memledger optimize MODEL.onnx -o OUT.onnx`: runs the pass pipeline, proves the rewrite
// on seeded inputs (exit 4 and nothing written when an output differs), and shows the
// ledger before and after under the chosen device. Nothing is written unless every
// output could be computed; no output goes over the input model or over another output.
#include <fmt/format.h>

#include "commands.h"
#include "device_option.h"
#include "flag_errors.h"
#include "memledger/core/error.h"
#include "memledger/core/output_file.h"
#include "memledger/core/text.h"
#include "memledger/ir/printer.h"
#include "memledger/onnx/export.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/report/diff.h"
#include "memledger/report/html_report.h"
#include "memledger/report/optimize_report.h"
#include "memledger/verify/optimize.h"
#include "model_options.h"
#include "option_checks.h"

namespace memledger::cli {
namespace {

struct OptimizeArgs {
  ModelOptions model;
  std::string output, passes, json_path, html_path, device;
  double approximate = 0;
  double tolerance = 1e-4;
  uint64_t seed = 1;
  std::string kernels = "fast";
  bool dump = false;
};

void run_optimize(const OptimizeArgs& args, int& exit_code) {
  // Every output is checked before any work, so a refusal leaves nothing behind.
  OutputSet outputs;
  protect_model(outputs, args.model.path);
  protect_device_file(outputs, args.device);
  outputs.declare(args.output, "-o");
  if (!args.json_path.empty()) outputs.declare(args.json_path, "--json");
  if (!args.html_path.empty()) outputs.declare(args.html_path, "--html");
  const DeviceProfile profile = device_from_flag(args.device);
  const Graph original = load_model(args.model);
  OptimizeOptions options;
  if (!args.passes.empty()) options.passes = parse_flag("--passes", [&] { return parse_pipeline(args.passes); });
  options.pass_options.approximate_tolerance = args.approximate;
  options.verify = {.seed = args.seed, .rtol = args.tolerance, .kernels = *parse_kernel_set(args.kernels)};
  if (args.dump) {
    fmt::print("// input\n{}", escape_for_terminal(print_graph(original), true));
    options.dump = [](const std::string& text) { fmt::print("{}", escape_for_terminal(text, true)); };
  }
  const OptimizeResult result = optimize_graph(original, options);

  fmt::print("model: {} ({} nodes → {})\n", args.model.path, original.order().size(), result.graph.order().size());
  fmt::print("{:<22} {:>8} {:>14}\n", "pass", "rewrote", "bytes saved");
  for (const PipelineStep& s : result.steps)
    fmt::print("{:<22} {:>8} {:>14}\n", s.pass, s.result.nodes_rewritten, s.result.bytes_saved);
  if (result.lowered > 0) fmt::print("as written: {} Affine lowered to Mul + Add\n", result.lowered);
  fmt::print("verification (seed {}, rtol {}, {} kernels):\n{}", args.seed, options.verify.rtol,
             kernel_set_name(result.verification.kernels), escape_for_terminal(result.verification.describe(), true));
  if (args.approximate > 0)
    fmt::print("approximate (tolerance {}): measured output error max|diff| {:.3g}, max rel {:.3g}\n", args.approximate,
               result.verification.max_abs, result.verification.max_rel);
  if (!result.verification.ok) {
    fmt::print(stderr, "memledger: the rewritten model computes different numbers; nothing written\n");
    exit_code = static_cast<int>(ExitCode::kVerificationFailed);
    return;
  }

  const PlacementOptions placement{.algorithm = allocate::Algorithm::kGreedy};
  const MemoryPlan before = plan_memory(original, profile, {}, placement);
  const MemoryPlan after = plan_memory(result.graph, profile, {}, placement);
  fmt::print("device: {}\n{}", describe_profile(profile),
             format_diff(diff_plans(before, after, args.model.path, args.output)));

  // Everything is computed before the first file is written.
  const std::string model_bytes = export_onnx_bytes(result.graph);
  std::string json_text, html_text;
  if (!args.json_path.empty())
    json_text = optimize_report_json(result, original, before, after, profile, args.model.path, args.output);
  if (!args.html_path.empty())
    html_text =
        compare_report_html({original, before, profile, args.model.path}, {result.graph, after, profile, args.output});

  outputs.stage(args.output, model_bytes);
  if (!args.json_path.empty()) outputs.stage(args.json_path, json_text);
  if (!args.html_path.empty()) outputs.stage(args.html_path, html_text);
  outputs.commit();
  for (const auto& path : outputs.committed()) fmt::print("wrote {}\n", path.string());
}

}  // namespace

void register_optimize(CLI::App& app, int& exit_code) {
  std::string passes_help = "comma-separated passes (default: every exact one):";
  for (const PassInfo& p : pass_table()) passes_help += fmt::format("\n  {:<22} {}", p.name, p.summary);
  auto* command = app.add_subcommand("optimize", "rewrite a model to need less memory, verified on seeded inputs");
  auto args = std::make_shared<OptimizeArgs>();
  add_model_options(command, args->model);
  add_device_option(command, args->device, "host");
  command->add_option("-o,--output", args->output, "the rewritten model")->required();
  command->add_option("--passes", args->passes, passes_help);
  command->add_option("--json", args->json_path, "write passes, verification and both plan reports here");
  command->add_option("--html", args->html_path, "write the plans before and after side by side as one HTML page");
  command
      ->add_option("--approximate", args->approximate,
                   "also treat scales within TOL of 1 as 1 (changes numbers; the error is measured)")
      ->check(finite_non_negative());
  command->add_option("--tolerance", args->tolerance, "relative tolerance of the verification")
      ->check(finite_non_negative())
      ->capture_default_str();
  command->add_option("--seed", args->seed, "seed of the verification inputs")
      ->check(unsigned_integer())
      ->capture_default_str();
  command->add_option("--kernels", args->kernels, "kernel set both graphs run with in the verification")
      ->check(CLI::IsMember({"fast", "reference"}))
      ->capture_default_str();
  command->add_flag("--dump", args->dump, "print the text form after each pass");
  command->callback([args, &exit_code] { run_optimize(*args, exit_code); });
}

}  // namespace memledger::cli
