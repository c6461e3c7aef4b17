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
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "cmd_run.h"
#include "device_option.h"
#include "fit_options.h"
#include "flag_errors.h"
#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/core/output_file.h"
#include "memledger/exec/interpreter.h"
#include "memledger/fit/schedule.h"
#include "memledger/onnx/input_files.h"
#include "memledger/onnx/tensor_file.h"
#include "memledger/report/run_report.h"
#include "memledger/verify/model_run.h"

namespace memledger::cli {
namespace {

namespace fs = std::filesystem;

// A tensor file's bytes in the format its extension names.
std::string serialize_tensor(const std::string& path, const Tensor& t, const std::string& name) {
  return is_tensor_proto_path(path) ? serialize_tensor_proto(t, name) : serialize_npy(t);
}

// --threads 0: every core the machine reports (one when it reports none).
int thread_count(int asked) {
  if (asked > 0) return asked;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

ExecOptions exec_options(const RunCommandOptions& o) {
  return {.kernels = *parse_kernel_set(o.kernels),
          .threads = thread_count(o.threads),
          .prepack_weights = !o.no_prepack,
          .max_memory_bytes = o.max_memory};
}

// A file name for an output: its name with anything but [A-Za-z0-9._-] replaced.
std::string file_stem(const std::string& name) {
  std::string s = name.empty() ? "output" : name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return s;
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
  return for_flag("--input", [&] {
    return read_input_files(graph, given, [&outputs](const std::string& path) { outputs.protect_input(path); });
  });
}

}  // namespace

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

  ModelRunOptions run{.exec = exec_options(o), .repeat = o.repeat, .tolerance = o.tolerance};
  if (o.arena) {
    ArenaCheckOptions& arena = run.arena.emplace();
    arena.device = o.fit ? fit_profile(device_from_flag(o.device), o.fit_options) : device_from_flag(o.device);
    arena.exec = run.exec;
    if (o.fit) arena.fit = fit_options(graph, arena.device, o.fit_options, false);
    arena.schedule = parse_flag("--schedule", [&] { return parse_schedule_kind(o.schedule); });
  }
  std::optional<Graph> other;
  if (!o.compare.empty()) {
    ModelOptions other_options = o.model;
    other_options.path = o.compare;
    other = load_model(other_options);
    for_flag("--compare " + o.compare, [&] { return inputs_by_name(graph, inputs, *other); });
    run.compare = &*other;
  }
  const ModelRun r = run_model(graph, inputs, run);
  fmt::print("{}", model_run_text(graph, r, run, o.compare));
  if (r.arena_failed()) {
    exit_code = static_cast<int>(ExitCode::kVerificationFailed);
    fmt::print(stderr, "memledger: the arena run broke a guard or changed the outputs; nothing written\n");
    return;
  }
  if (r.differs()) {
    exit_code = static_cast<int>(ExitCode::kVerificationFailed);
    fmt::print(stderr, "memledger: outputs differ beyond --tolerance {:g}; nothing written\n", o.tolerance);
    return;
  }

  for (size_t i = 0; i < targets.size(); ++i)
    files.stage(targets[i], serialize_tensor(targets[i].string(), r.outputs[i], graph.value(graph.outputs()[i]).name));
  files.commit();
  for (const fs::path& path : files.committed()) fmt::print("wrote {}\n", path.string());
  exit_code = static_cast<int>(ExitCode::kOk);
}

}  // namespace memledger::cli
