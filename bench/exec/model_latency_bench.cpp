// Whole-model latency: memledger's reference interpreter against onnxruntime on one thread
// (intra_op_num_threads = 1), on the corpus models, measured in the same run. onnxruntime
// runs in its own process through tests/ort/run_model.mjs (medians of its session.run
// calls, graph optimisations on as a user gets them by default, and off); memledger's
// times are medians of run_graph with a heap provider (input copied in, outputs out).
// Both wall and CPU time are reported: on a shared, loaded machine wall time mostly
// measures the wait for a core, so the ratio uses CPU time (cpu_ratio = memledger/ort).
//
//   model_latency_bench [--benchmark_...]      corpus from $MEMLEDGER_CORPUS_DIR or ./corpus
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>

#include "memledger/core/error.h"
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

struct OrtTimes {
  double wall_ms = -1, cpu_ms = -1;
};

// onnxruntime's median wall and CPU time per run; negative when it could not run.
OrtTimes ort_latency(const fs::path& model, const std::string& input_name, const fs::path& input, bool optimize) {
  const fs::path script = fs::path(__FILE__).parent_path().parent_path().parent_path() / "tests/ort/run_model.mjs";
  const std::string command = "node '" + script.string() + "' '" + model.string() + "' /tmp/memledger_bench_ort '" +
                              input_name + "=" + input.string() + "' --repeat 15" + (optimize ? " --optimize" : "");
  OrtTimes t;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return t;
  char line[256];
  while (std::fgets(line, sizeof line, pipe)) {
    std::sscanf(line, "latency_ms %lf", &t.wall_ms);
    std::sscanf(line, "cpu_ms %lf", &t.cpu_ms);
  }
  pclose(pipe);
  return t;
}

void BM_Model(benchmark::State& state, const std::string& name) {
  const fs::path model = corpus_dir() / (name + ".onnx"), input = corpus_dir() / (name + ".input.npy");
  if (!fs::exists(model) || !fs::exists(input)) {
    state.SkipWithError(("missing " + model.string()).c_str());
    return;
  }
  Graph graph;
  try {
    graph = import_onnx_file(model.string());
  } catch (const Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const std::vector<Tensor> inputs{read_tensor_file(input.string()).tensor};
  run_graph(graph, inputs);  // warm-up
  std::vector<double> wall, cpu;
  for (auto _ : state) {
    const auto w0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    benchmark::DoNotOptimize(run_graph(graph, inputs));
    cpu.push_back(1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const std::string input_name = graph.value(graph.inputs().at(0)).name;
  const OrtTimes ort = ort_latency(model, input_name, input, true);
  const OrtTimes plain = ort_latency(model, input_name, input, false);
  state.counters["ml_ms"] = median(wall);
  state.counters["ml_cpu_ms"] = median(cpu);
  if (ort.wall_ms > 0) {
    state.counters["ort_ms"] = ort.wall_ms;
    state.counters["ort_cpu_ms"] = ort.cpu_ms;
    state.counters["ort_noopt_cpu_ms"] = plain.cpu_ms;
    state.counters["cpu_ratio"] = median(cpu) / ort.cpu_ms;  // memledger / onnxruntime
  }
}

const bool registered = [] {
  for (const char* name :
       {"resnet18", "mobilenet_v2", "squeezenet1_0", "shufflenet_v2_x1_0", "efficientnet_b0", "mnasnet0_5"})
    benchmark::RegisterBenchmark(name, [name](benchmark::State& s) { BM_Model(s, name); })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(7)
        ->Repetitions(1);
  return true;
}();

}  // namespace
}  // namespace memledger

BENCHMARK_MAIN();
