// `memledger diff BEFORE.json AFTER.json`: the change in logical, physical and peak-live
// bytes between two plan reports, split into constants, layout and lifetimes
// (report/diff.h states the rule).
#include <fmt/format.h>

#include "commands.h"
#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/core/text.h"
#include "memledger/report/diff.h"

namespace memledger::cli {
namespace {

// A plan report of 20,000 outputs is a few tens of MB; a bigger file is not one of ours.
constexpr int64_t kMaxReportBytes = int64_t{512} << 20;

std::string read_text(const std::string& path) { return read_input_file(path, kMaxReportBytes, "plan report"); }

}  // namespace

void register_diff(CLI::App& app, int& exit_code) {
  auto* command = app.add_subcommand("diff", "how two plan reports differ, and why (constants, layout, lifetimes)");
  auto paths = std::make_shared<std::pair<std::string, std::string>>();
  command->add_option("BEFORE", paths->first, "plan report (plan --json)")->required();
  command->add_option("AFTER", paths->second, "plan report (plan --json)")->required();
  command->callback([paths, &exit_code] {
    const ReportDiff d = diff_reports(read_text(paths->first), read_text(paths->second), paths->first, paths->second);
    fmt::print("before: {}\nafter:  {}\n{}", escape_for_terminal(d.model_before), escape_for_terminal(d.model_after),
               format_diff(d));
    exit_code = 0;
  });
}

}  // namespace memledger::cli
