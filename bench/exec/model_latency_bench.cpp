// Whole-model latency: memledger's reference interpreter against onnxruntime on one thread
// (intra_op_num_threads = 1), on the corpus models, measured in the same run. onnxruntime
// runs in its own process through tests/ort/run_model.mjs (median of its session.run
// calls, graph optimisations on, as a user gets it by default); memledger's time is the
// benchmark's own (run_graph with a heap provider: input copy in, outputs copied out).
//
//   model_latency_bench [--benchmark_...]      corpus from $MEMLEDGER_CORPUS_DIR or ./corpus
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "memledger/exec/interpreter.h"
#include "memledger/exec/tensor_file.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

fs::path corpus_dir() {
  const char* dir = std::getenv("MEMLEDGER_CORPUS_DIR");
  return dir ? fs::path(dir) : fs::path("corpus");
}

// onnxruntime's median latency in ms, or a negative number when it could not run.
double ort_latency_ms(const fs::path& model, const std::string& input_name, const fs::path& input, bool optimize) {
  const fs::path script = fs::path(__FILE__).parent_path().parent_path().parent_path() / "tests/ort/run_model.mjs";
  const std::string command = "node '" + script.string() + "' '" + model.string() + "' /tmp/memledger_bench_ort '" +
                              input_name + "=" + input.string() + "' --repeat 20" + (optimize ? " --optimize" : "");
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return -1;
  char line[256];
  double ms = -1;
  while (std::fgets(line, sizeof line, pipe))
    if (std::sscanf(line, "latency_ms %lf", &ms) == 1) break;
  pclose(pipe);
  return ms;
}

void BM_Model(benchmark::State& state, const std::string& name) {
  const fs::path model = corpus_dir() / (name + ".onnx"), input = corpus_dir() / (name + ".input.npy");
  if (!fs::exists(model) || !fs::exists(input)) {
    state.SkipWithError(("missing " + model.string()).c_str());
    return;
  }
  const Graph graph = import_onnx_file(model.string());
  const std::vector<Tensor> inputs{read_tensor_file(input.string()).tensor};
  run_graph(graph, inputs);  // warm-up
  for (auto _ : state) benchmark::DoNotOptimize(run_graph(graph, inputs));
  const std::string input_name = graph.value(graph.inputs().at(0)).name;
  const double ort = ort_latency_ms(model, input_name, input, true);
  const double ort_plain = ort_latency_ms(model, input_name, input, false);
  if (ort > 0) {
    state.counters["ort_ms"] = ort;
    state.counters["ort_noopt_ms"] = ort_plain;
  }
}

const bool registered = [] {
  for (const char* name :
       {"resnet18", "mobilenet_v2", "squeezenet1_0", "shufflenet_v2_x1_0", "efficientnet_b0", "mnasnet0_5"})
    benchmark::RegisterBenchmark(name, [name](benchmark::State& s) { BM_Model(s, name); })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(10)
        ->Repetitions(1);
  return true;
}();

}  // namespace
}  // namespace memledger

BENCHMARK_MAIN();
