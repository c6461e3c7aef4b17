// `memledger run MODEL.onnx`: runs a model in the reference interpreter on inputs from
// files (.pb or .npy) or on seeded random ones, prints each output's summary, optionally
// writes the outputs and compares them with another model run on the same inputs. With
// --arena it also plans the model and runs it again inside the planned arena with guards
// (exec/arena_run), which must give bit-identical outputs; with --fit the plan is the one
// `memledger fit` finds for the device (fit/fit.h: reordered, in place, patched), and its
// graph runs inside the arena against the ordinary run of the model itself (with the fast
// kernels, planned with their declared contracts). --kernels picks
// the kernel set (fast: oneDNN where it takes a node), --threads its threads, --repeat times N runs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <optional>

#include "commands.h"
#include "device_option.h"
#include "fit_options.h"
#include "flag_errors.h"
#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/core/output_file.h"
#include "memledger/core/text.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/compare.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/exec/planned_arena.h"
#include "memledger/fit/fit.h"
#include "memledger/fit/schedule.h"
#include "memledger/ir/integer_node.h"
#include "memledger/onnx/import.h"
#include "memledger/onnx/tensor_file.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/report/arena_report.h"
#include "memledger/report/fit_report.h"
#include "memledger/verify/fit_arena.h"
#include "memledger/verify/verify.h"
#include "model_options.h"
#include "option_checks.h"

namespace memledger::cli {
namespace {

namespace fs = std::filesystem;

// A tensor file's bytes in the format its extension names.
std::string serialize_tensor(const std::string& path, const Tensor& t, const std::string& name) {
  return is_tensor_proto_path(path) ? serialize_tensor_proto(t, name) : serialize_npy(t);
}

struct RunCommandOptions {
  ModelOptions model;
  std::vector<std::string> inputs;  // NAME=FILE
  std::string output_dir;
  std::string output_format = "npy";
  uint64_t seed = 0;
  std::string compare;
  double tolerance = 1e-4;
  bool arena = false;
  std::string device;
  std::string schedule = "model";
  std::string kernels = "fast";
  int threads = 1;
  int repeat = 0;
  bool no_prepack = false;
  bool fit = false;
  FitCliOptions fit_options;
  int64_t max_memory = kDefaultMaxMemoryBytes;
};

ExecOptions exec_options(const RunCommandOptions& o) {
  return {.kernels = *parse_kernel_set(o.kernels),
          .threads = o.threads,
          .prepack_weights = !o.no_prepack,
          .max_memory_bytes = o.max_memory};
}

// Median and spread of `repeat` timed runs after one warm-up, onnxruntime perf-tool style.
void print_repeat(const std::string& what, int repeat, const std::function<void()>& once) {
  once();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    once();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  fmt::print("{}: {} runs after a warm-up: median {:.3f} ms, min {:.3f}, max {:.3f}, mean {:.3f}\n", what, repeat,
             median, ms.front(), ms.back(), mean);
}

// A file name for an output: its name with anything but [A-Za-z0-9._-] replaced.
std::string file_stem(const std::string& name) {
  std::string s = name.empty() ? "output" : name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return s;
}

std::string summary(const Tensor& t) {
  if (t.elements() == 0) return "empty";
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.elements(); ++i) {
    const double v = t.element_as_double(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  return fmt::format("min {:.6g}, max {:.6g}, mean {:.6g}", lo, hi, sum / static_cast<double>(t.elements()));
}

std::vector<Tensor> timed_run(const Graph& graph, const std::vector<Tensor>& inputs, double& ms,
                              const ExecOptions& exec) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Tensor> out = run_graph(
      graph, inputs, {.kernels = exec.kernels, .threads = exec.threads, .max_memory_bytes = exec.max_memory_bytes});
  ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

// The inputs from --input NAME=FILE, every graph input exactly once; or seeded ones.
std::vector<Tensor> load_inputs(const Graph& graph, const RunCommandOptions& o, OutputSet& outputs) {
  const int64_t input_bytes = graph_input_bytes(graph);
  if (input_bytes > o.max_memory)
    fail("the graph's inputs hold {} B, more than the memory limit of {} B (--max-memory)", input_bytes, o.max_memory);
  if (o.inputs.empty()) {
    fmt::print("inputs: seeded random (seed {})\n", o.seed);
    return random_inputs(graph, o.seed, o.max_memory);
  }
  std::map<std::string, std::string> given;
  for (const std::string& text : o.inputs) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
      fail("--input '{}': expected NAME=FILE (.pb or .npy)", text);
    const std::string name = text.substr(0, eq);
    if (!given.emplace(name, text.substr(eq + 1)).second) fail("--input '{}': input '{}' given twice", text, name);
  }
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    auto it = given.find(v.name);
    if (it == given.end())
      fail("input '{}' ({} {}) has no --input file", v.name, dtype_name(v.dtype), shape_to_string(v.shape));
    // A file may hold its header and, for .pb, varint-coded integers besides the data.
    const int64_t expected = checked_mul(element_count(v.shape, v.name), host_element_bytes(v.dtype), v.name);
    const int64_t bound = checked_add(checked_mul(expected, 3, v.name), int64_t{1} << 20, v.name);
    outputs.protect_input(it->second);
    NamedTensor t = read_tensor_file(it->second, bound);
    if (t.tensor.dtype() != v.dtype || t.tensor.shape() != v.shape)
      fail("input '{}': {} holds {} {}, the model expects {} {}", v.name, it->second, dtype_name(t.tensor.dtype()),
           shape_to_string(t.tensor.shape()), dtype_name(v.dtype), shape_to_string(v.shape));
    inputs.push_back(std::move(t.tensor));
    given.erase(it);
  }
  if (!given.empty()) {
    std::string names;
    for (ValueId id : graph.inputs()) names += (names.empty() ? "" : ", ") + graph.value(id).name;
    fail("--input '{}': the model has no input of that name (inputs: {})", given.begin()->first, names);
  }
  return inputs;
}

// Plans the model for the device (with its own dtypes), runs it inside the arena and
// prints the verdict. False when a guard broke or an output differs.
bool arena_run(const Graph& model, const RunCommandOptions& o, const std::vector<Tensor>& inputs,
               const std::vector<Tensor>& outputs) {
  const DeviceProfile given =
      o.fit ? fit_profile(device_from_flag(o.device), o.fit_options) : device_from_flag(o.device);
  const DeviceProfile profile = with_model_dtypes(given);
  std::optional<FitResult> fit;
  std::optional<FitArenaPlan> fit_arena;  // the plan that runs the fit (verify/fit_arena.h)
  Graph reordered = model;
  MemoryPlan plan;
  const ExecOptions exec = exec_options(o);
  if (o.fit) {
    fit = run_fit(model, given, o.fit_options, false);
  } else {
    // A memory-aware order runs a reordered copy; its outputs must match the model order's.
    if (parse_flag("--schedule", [&] { return parse_schedule_kind(o.schedule); }) == ScheduleKind::kMemory) {
      const ScheduleResult s = memory_aware_schedule(model, profile);
      reordered.set_order(s.order);
      fmt::print("memory-aware order ({}{}): peak-live {} B against {} B in the model's order\n", s.method,
                 s.optimal ? ", optimal" : "", s.peak_live_bytes, s.model_order_peak_bytes);
    }
  }
  const Graph& graph = fit ? fit->graph : reordered;
  // A fit's plan chooses the kernels of its nodes (verify/fit_arena.h); otherwise the
  // executor is prepared once and the plan takes the kernels' contracts from it.
  if (fit) fit_arena = plan_fit_arena(*fit, given, exec);
  Executor executor(graph, fit ? fit_arena->exec : exec);
  plan = fit ? fit_arena->plan : plan_for_kernels(executor, profile);
  if (plan.arena_bytes > o.max_memory)
    fail("the arena of {} B is more than the memory limit of {} B (--max-memory)", plan.arena_bytes, o.max_memory);
  // The fast kernels' arena run of a fit is compared with their ordinary run of the fit's
  // graph, whose difference from the model's outputs the report prints (verify/fit_arena.h).
  const FitArenaReference compared_with =
      fit ? fit_arena_reference(*fit_arena, executor, inputs, outputs) : FitArenaReference{};
  const auto start = std::chrono::steady_clock::now();
  const ArenaRunReport r = run_in_arena(executor, graph, plan, inputs, compared_with.outputs(outputs));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{}", arena_run_text(r, {.graph = &graph,
                                      .plan = &plan,
                                      .given = &given,
                                      .kernels = exec.kernels,
                                      .milliseconds = ms,
                                      .fit = fit ? &*fit : nullptr,
                                      .fit_arena = fit_arena ? &*fit_arena : nullptr,
                                      .compared_with = &compared_with}));
  if (o.repeat > 0 && r.clean()) {
    // The same kernels at the same planned offsets, without the guard checks.
    PlannedArena arena(graph, plan);
    std::vector<Tensor> scratch = executor.make_outputs();
    print_repeat("arena latency (planned offsets, no guards)", o.repeat,
                 [&] { executor.run_into(inputs, scratch, arena); });
  }
  return fit ? fit_arena_proved(*fit, *fit_arena, r) : r.clean();
}

void run_command(const RunCommandOptions& o, int& exit_code) {
  OutputSet files;
  protect_model(files, o.model.path);
  if (!o.compare.empty()) protect_model(files, o.compare);
  if (o.arena) protect_device_file(files, o.device);
  if (!o.output_dir.empty()) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(o.output_dir, ec)) && !fs::is_directory(o.output_dir, ec))
      fail("--output-dir {}: not a folder", o.output_dir);
  }
  const Graph graph = load_model(o.model);
  // Every output path is known once the model is: checked before anything runs.
  std::vector<fs::path> targets;
  if (!o.output_dir.empty())
    for (ValueId id : graph.outputs()) {
      targets.push_back(fs::path(o.output_dir) / (file_stem(graph.value(id).name) + "." + o.output_format));
      files.declare(targets.back(), "--output-dir", true);
    }
  const std::vector<Tensor> inputs = load_inputs(graph, o, files);

  const ExecOptions exec = exec_options(o);
  std::vector<Tensor> outputs;
  {
    // One executor for the run, its summary and --repeat: a second one would prepack the
    // weights again while the first run's are still resident. A single run lets go of
    // each mapped weight after its last reader.
    const auto start = std::chrono::steady_clock::now();
    ExecOptions once = exec;
    once.release_weights_after_use = o.repeat == 0;
    // Prepacking holds a reordered copy of every weight beside the originals, which only
    // pays off over repeated runs; a single run reorders each weight into its node's
    // workspace, which is freed after the node (the same reorders, once).
    once.prepack_weights = exec.prepack_weights && o.repeat > 0;
    Executor executor(graph, once);
    outputs = executor.run(inputs);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    fmt::print("ran {} nodes in {:.1f} ms (with preparation)\n", graph.order().size(), ms);
    fmt::print("kernels: {}\n", executor.summary());
    if (o.repeat > 0) {
      HeapBufferProvider heap;
      std::vector<Tensor> scratch = executor.make_outputs();
      print_repeat("latency", o.repeat, [&] { executor.run_into(inputs, scratch, heap); });
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& v = graph.value(graph.outputs()[i]);
    fmt::print("output '{}': {} {}: {}\n", escape_for_terminal(v.name), dtype_name(v.dtype), shape_to_string(v.shape),
               summary(outputs[i]));
  }

  if (o.arena && !arena_run(graph, o, inputs, outputs)) {
    exit_code = static_cast<int>(ExitCode::kVerificationFailed);
    fmt::print(stderr, "memledger: the arena run broke a guard or changed the outputs; nothing written\n");
    return;
  }

  bool differs = false;
  if (!o.compare.empty()) {
    ModelOptions other_options = o.model;
    other_options.path = o.compare;
    const Graph other = load_model(other_options);
    std::map<std::string, Tensor> by_name;
    for (size_t i = 0; i < inputs.size(); ++i) by_name.emplace(graph.value(graph.inputs()[i]).name, inputs[i]);
    std::vector<Tensor> other_inputs;
    for (ValueId id : other.inputs()) {
      auto it = by_name.find(other.value(id).name);
      if (it == by_name.end())
        fail("--compare {}: input '{}' is not an input of {}", o.compare, other.value(id).name, o.model.path);
      other_inputs.push_back(it->second);
    }
    double other_ms = 0;
    const std::vector<Tensor> reference = timed_run(other, other_inputs, other_ms, exec);
    if (reference.size() != outputs.size())
      fail("--compare {}: {} outputs, {} has {}", o.compare, reference.size(), o.model.path, outputs.size());
    fmt::print("compare with {} ({:.1f} ms), tolerance {:g}:\n", o.compare, other_ms, o.tolerance);
    std::vector<std::string> names;
    for (ValueId id : graph.outputs()) names.push_back(graph.value(id).name);
    const Verification v = compare_outputs(names, outputs, reference, o.tolerance);
    fmt::print("{}", escape_for_terminal(v.describe(), true));
    differs = !v.ok;
  }
  if (differs) {
    exit_code = static_cast<int>(ExitCode::kVerificationFailed);
    fmt::print(stderr, "memledger: outputs differ beyond --tolerance {:g}; nothing written\n", o.tolerance);
    return;
  }

  for (size_t i = 0; i < targets.size(); ++i)
    files.stage(targets[i], serialize_tensor(targets[i].string(), outputs[i], graph.value(graph.outputs()[i]).name));
  files.commit();
  for (const fs::path& path : files.committed()) fmt::print("wrote {}\n", path.string());
  exit_code = static_cast<int>(ExitCode::kOk);
}

}  // namespace

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
  command->add_option("--threads", options->threads, "threads of the fast kernels")
      ->check(CLI::Range(1, 1024))
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
  for (const char* name : {"--capacity", "--patch", "--inner-patch", "--time-budget"})
    command->get_option(name)->needs(fit);
  command->callback([options, &exit_code] { run_command(*options, exit_code); });
}

}  // namespace memledger::cli
