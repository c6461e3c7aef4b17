// The subcommands of the `memledger` program. Each lives in its own cmd_<name>.cpp and
// only wires library stages together; main.cpp registers them and turns errors into exit
// codes. A command reports its exit code through `exit_code` (e.g. 3: does not fit).
#pragma once

#include <CLI/CLI.hpp>

namespace memledger::cli {

void register_demo(CLI::App& app, int& exit_code);
void register_allocate(CLI::App& app, int& exit_code);
void register_run(CLI::App& app, int& exit_code);
void register_plan(CLI::App& app, int& exit_code);
void register_inspect(CLI::App& app, int& exit_code);
void register_optimize(CLI::App& app, int& exit_code);
void register_diff(CLI::App& app, int& exit_code);
void register_fit(CLI::App& app, int& exit_code);

}  // namespace memledger::cli
