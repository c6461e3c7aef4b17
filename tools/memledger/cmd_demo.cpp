// `memledger demo`: the teaching example's story, every figure computed by the library.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "commands.h"
#include "device_option.h"
#include "memledger/core/output_file.h"
#include "memledger/teaching/story.h"

namespace memledger::cli {
namespace {

struct ReportArgs {
  std::string html_path, json_path, compare_html_path;
  std::string variant = "expanded";
};

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
    fmt::print("{}", teaching::story_text(profile));
    // --html/--json: the report of one plan of the teaching example, as `plan` writes it for
    // a model file; --compare-html: the model a user brings beside variant C.
    if (!reports->html_path.empty())
      outputs.stage(reports->html_path, teaching::variant_report_html(reports->variant, profile));
    if (!reports->json_path.empty())
      outputs.stage(reports->json_path, teaching::variant_report_json(reports->variant, profile));
    if (!reports->compare_html_path.empty())
      outputs.stage(reports->compare_html_path, teaching::compare_report_html(profile));
    outputs.commit();
    for (size_t i = 0; i < outputs.committed().size(); ++i)
      fmt::print("{}wrote {}\n", i == 0 ? "\n" : "", outputs.committed()[i].string());
  });
}

}  // namespace memledger::cli
