// The flags of `memledger run` and what each one needs (cmd_run.h: the options they fill).
#include <memory>

#include "cmd_run.h"
#include "commands.h"
#include "device_option.h"
#include "option_checks.h"

namespace memledger::cli {

void register_run(CLI::App& app, int& exit_code) {
  auto* command = app.add_subcommand("run", "run a model (fast or reference kernels), on files or seeded inputs");
  auto options = std::make_shared<RunCommandOptions>();
  add_model_options(command, options->model);
  command->add_option("--input", options->inputs, "a graph input from a file, NAME=FILE (.pb or .npy; repeatable)");
  command->add_option("--output-dir", options->output_dir, "write each output here as <output name>.<format>");
  command->add_option("--output-format", options->output_format, "npy or pb")
      ->check(CLI::IsMember({"npy", "pb"}))
      ->capture_default_str();
  command->add_option("--seed", options->seed, "seed of the random inputs when no --input is given")
      ->check(unsigned_integer())
      ->capture_default_str();
  command->add_option("--compare", options->compare, "run this model on the same inputs and compare the outputs");
  command
      ->add_option("--tolerance", options->tolerance,
                   "with --compare: exit code 4 when an element differs by more than tolerance × (max|other output| + "
                   "|other element|)")
      ->check(finite_non_negative())
      ->capture_default_str();
  command
      ->add_option("--max-memory", options->max_memory,
                   "bytes the interpreter may hold at once (suffixes K, M, G: powers of 1024); a buffer past it is "
                   "refused, naming the node")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  auto* arena = command->add_flag(
      "--arena", options->arena,
      "also plan the model and run it inside the planned arena with guard bytes; exit code 4 when a guard breaks or "
      "an output is not bit-identical");
  command->add_option("--kernels", options->kernels, "fast (oneDNN where it takes a node) or reference")
      ->check(CLI::IsMember({"fast", "reference"}))
      ->capture_default_str();
  command
      ->add_option("--threads", options->threads,
                   "threads of the fast kernels (oneDNN's primitives and the fast set's own loops); 0: every core")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  command->add_flag("--no-prepack", options->no_prepack,
                    "fast kernels: reorder blocked weights on every run into the declared workspace instead of "
                    "holding a reordered copy");
  command
      ->add_option("--repeat", options->repeat,
                   "time N runs after a warm-up and print their median and spread (with --arena: inside the "
                   "arena too)")
      ->check(CLI::Range(1, 1000000));
  add_device_option(command, options->device, "host");
  command->get_option("--device")->needs(arena);
  auto* schedule =
      command
          ->add_option("--schedule", options->schedule,
                       "with --arena: the order to run in, model (the graph's own) or memory (least peak-live)")
          ->capture_default_str()
          ->needs(arena);
  auto* fit =
      command->add_flag("--fit", options->fit,
                        "with --arena: run the plan `memledger fit` finds for --device (same --capacity, "
                        "--patch, --inner-patch, --time-budget), its graph against the ordinary run of the model; "
                        "the fast kernels plan that graph with their own contracts");
  fit->needs(arena)->excludes(schedule);
  add_fit_options(command, options->fit_options);
  for (const char* name : {"--capacity", "--patch", "--inner-patch", "--time-budget", "--prefer"})
    command->get_option(name)->needs(fit);
  command->callback([options, &exit_code] { run_command(*options, exit_code); });
}

}  // namespace memledger::cli
