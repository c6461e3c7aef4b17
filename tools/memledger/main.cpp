// memledger: how many bytes a model needs at once, why, and how to make it fit.
// Errors from the library arrive here as memledger::Error and leave as exit codes.
#include <malloc.h>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "commands.h"
#include "flag_errors.h"
#include "memledger/core/error.h"
#include "memledger/core/text.h"
#include "memledger/version.h"

int main(int argc, char** argv) {
  // No fastbins in glibc's allocator: the program makes and frees many small objects per node
  // (graph records, oneDNN primitives and memory descriptors) between large buffers, and the
  // fastbins' consolidation then took a third of the CPU time of `optimize` on a 10^5-node
  // chain (5.1 -> 4.3 s; model runs, plans and fits measured no slower). tcache still serves
  // small allocations first.
  mallopt(M_MXFAST, 0);
  CLI::App app{"memledger: how many bytes a neural network needs at once, why, and how to make it fit"};
  app.set_version_flag("--version", std::string("memledger ") + memledger::kVersion);
  app.require_subcommand(1);
  int exit_code = 0;
  memledger::cli::register_demo(app, exit_code);
  memledger::cli::register_allocate(app, exit_code);
  memledger::cli::register_run(app, exit_code);
  memledger::cli::register_plan(app, exit_code);
  memledger::cli::register_inspect(app, exit_code);
  memledger::cli::register_optimize(app, exit_code);
  memledger::cli::register_diff(app, exit_code);
  memledger::cli::register_fit(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(memledger::ExitCode::kBadInput);
  } catch (const memledger::Error& e) {
    std::fflush(stdout);
    // The library names the option a refused value came from; the flag that set it is ours.
    const std::string_view flag = memledger::cli::flag_of(e.option());
    const std::string message = flag.empty() ? std::string(e.what()) : fmt::format("{}: {}", flag, e.what());
    // Names in messages come from files: control characters are printed escaped.
    std::fprintf(stderr, "memledger: error: %s\n", memledger::escape_for_terminal(message).c_str());
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "memledger: error: out of memory\n");
    return static_cast<int>(memledger::ExitCode::kBadInput);
  }
  return exit_code;
}
