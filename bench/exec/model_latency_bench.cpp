// Whole-model latency and peak memory, side by side in one run, one thread each:
// memledger with the fast kernels (oneDNN), with the reference kernels, with the fast
// kernels inside the planned arena (PlannedArena: every buffer at its planned offset), and
// onnxruntime-node (tests/ort/run_model.mjs, intraOpNumThreads 1, graph optimisations on)
// on the corpus models and their seeded input. Every configuration runs in its own child
// process, so its peak RSS (getrusage of the child) is its own: the model loaded, weights,
// buffers, libraries. Rounds alternate the configurations so that the machine's drift hits
// all alike; each child reports the medians of its timed runs after a warm-up (wall and
// CPU time), and the table gives the median over rounds. Ratios use CPU time (on a shared,
// loaded machine wall time mostly measures the wait for a core).
//
//   model_latency_bench [--rounds R] [--runs N] [--models a,b,...] [--configs fast,arena,...]
//                       [--baseline OTHER_BENCH] [--threads T]
//   model_latency_bench --profile MODEL.onnx INPUT.npy fast|arena|arena-stretched|reference RUNS [TOP]
//   corpus from $MEMLEDGER_CORPUS_DIR or ./corpus
// --baseline adds the configuration "baseline": OTHER_BENCH (this benchmark built from an
// older commit) runs the fast kernels in its own child, in the same rounds, so an old and a
// new build are compared side by side under the same load. "arena-stretched" (an experiment
// on the placement's address bits, see stretch()) has no column: its medians are in the
// comment line after each row, with every configuration's. --threads T (default 1) runs
// memledger's fast kernels and onnxruntime (intraOpNumThreads) on T threads; then the table's
// figures are wall-time medians (CPU time sums the threads).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/planned_arena.h"
#include "memledger/onnx/import.h"
#include "memledger/onnx/tensor_file.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

fs::path corpus_dir() {
  const char* dir = std::getenv("MEMLEDGER_CORPUS_DIR");
  return dir ? fs::path(dir) : fs::path("corpus");
}

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// "arena-stretched", an experiment on where the plan puts buffers (not a plan memledger
// makes): every offset × 17/16, rounded up to 64 B, in an arena 1/16 larger. Buffers that do
// not overlap in the plan still do not (the gap between two grows by a sixteenth of it: at
// least 64 B between buffers of 1 KiB or more), but their addresses modulo 4 KiB change, so
// a difference to "arena" is what the placement's low address bits cost.
void stretch(MemoryPlan& plan) {
  for (int64_t& offset : plan.offsets)
    if (offset > 0) offset = (offset * 17 / 16 + 63) / 64 * 64;
  plan.arena_bytes = plan.arena_bytes * 17 / 16 + 4096;
}

// One configuration's executor and where its buffers live: the heap, or the planned arena
// ("arena", "arena-stretched") with its plan.
struct Configured {
  Configured(const Graph& graph, const std::string& mode, const ExecOptions& exec)
      : executor(graph, exec), outputs(executor.make_outputs()) {
    if (mode == "arena" || mode == "arena-stretched") {
      plan = std::make_unique<MemoryPlan>(plan_for_kernels(graph, builtin_profile("host"), exec));
      if (mode == "arena-stretched") stretch(*plan);
      arena = std::make_unique<PlannedArena>(graph, *plan);
    }
  }
  BufferProvider& provider() { return arena ? static_cast<BufferProvider&>(*arena) : heap; }

  Executor executor;
  std::vector<Tensor> outputs;
  HeapBufferProvider heap;
  std::unique_ptr<MemoryPlan> plan;
  std::unique_ptr<PlannedArena> arena;
};

// The child: one configuration of memledger (fast, fast-no-prepack, reference, arena), N
// timed runs after a warm-up.
int child(const std::string& model, const std::string& input, const std::string& mode, int runs, int threads) {
  const Graph graph = import_onnx_file(model);
  const std::vector<Tensor> inputs{read_tensor_file(input).tensor};
  Configured c(graph, mode,
               {.kernels = mode == "reference" ? KernelSet::kReference : KernelSet::kFast,
                .threads = threads,
                .prepack_weights = mode != "fast-no-prepack"});
  Executor& executor = c.executor;
  std::vector<Tensor>& outputs = c.outputs;
  BufferProvider& provider = c.provider();
  const std::unique_ptr<PlannedArena>& arena = c.arena;
  const std::unique_ptr<MemoryPlan>& plan = c.plan;
  HeapBufferProvider& heap = c.heap;
  executor.run_into(inputs, outputs, provider);  // warm-up
  std::vector<double> wall, cpu;
  for (int i = 0; i < runs; ++i) {
    const auto w0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    executor.run_into(inputs, outputs, provider);
    cpu.push_back(1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count());
  }
  std::printf("latency_ms %.4f\ncpu_ms %.4f\n", median(wall), median(cpu));
  if (arena)
    std::printf("arena_bytes %lld\n", static_cast<long long>(plan->arena_bytes));
  else
    std::printf("heap_peak_bytes %lld\n", static_cast<long long>(heap.peak_bytes()));
  std::printf("prepacked_bytes %lld\n", static_cast<long long>(executor.prepacked_bytes()));
  return 0;
}

std::string fmt_number(const char* format, double value);

// --profile: where one configuration's run goes, node by node. The CPU time of this thread
// between one node's end and the next's (the kernel and the executor's bookkeeping for the
// node: buffers taken and released), median over the timed runs, summed per operator
// (fused nodes under their own operator: a forwarding Relu shows what forwarding costs).
double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e6 * static_cast<double>(t.tv_sec) + 1e-3 * static_cast<double>(t.tv_nsec);
}

int profile(const std::string& model, const std::string& input, const std::string& mode, int runs, int top) {
  const Graph graph = import_onnx_file(model);
  const std::vector<Tensor> inputs{read_tensor_file(input).tensor};
  Configured c(graph, mode, {.kernels = mode == "reference" ? KernelSet::kReference : KernelSet::kFast, .threads = 1});
  Executor& executor = c.executor;
  std::vector<Tensor>& outputs = c.outputs;
  BufferProvider& provider = c.provider();
  const std::unique_ptr<MemoryPlan>& plan = c.plan;
  std::map<int32_t, std::vector<double>> per_node;
  std::vector<double> totals;
  double last = 0;
  auto after = [&](NodeId id) {
    const double now = thread_cpu_us();
    per_node[id.index].push_back(now - last);
    last = now;
  };
  executor.run_into(inputs, outputs, provider);  // warm-up
  per_node.clear();
  rusage before{}, after_runs{};
  getrusage(RUSAGE_SELF, &before);
  for (int i = 0; i < runs; ++i) {
    const double start = thread_cpu_us();
    last = start;
    executor.run_into(inputs, outputs, provider, after);
    totals.push_back(thread_cpu_us() - start);
  }
  getrusage(RUSAGE_SELF, &after_runs);
  struct Row {
    double us = 0;
    int nodes = 0;
  };
  std::map<std::string, Row> by_op;
  std::vector<std::pair<double, int32_t>> nodes;
  double sum = 0;
  for (auto& [index, times] : per_node) {
    const double us = median(times);
    const Node& n = graph.node(NodeId{index});
    Row& row = by_op[n.op];
    row.us += us;
    ++row.nodes;
    sum += us;
    nodes.push_back({us, index});
  }
  std::printf(
      "%s %s: run %.1f us CPU (median of %d), nodes %.1f us, outside the nodes %.1f us; page faults %.1f per run\n",
      model.c_str(), mode.c_str(), median(totals), runs, sum, median(totals) - sum,
      static_cast<double>(after_runs.ru_minflt - before.ru_minflt) / runs);
  std::vector<std::pair<double, std::string>> ops;
  for (const auto& [op, row] : by_op) ops.push_back({row.us, op});
  std::sort(ops.rbegin(), ops.rend());
  for (const auto& [us, op] : ops)
    std::printf("  %-20s %8.1f us %5.1f %%  %3d nodes\n", op.c_str(), us, 100 * us / sum, by_op[op].nodes);
  // In the arena, where the node's first input and its output lie (offsets modulo 4 KiB:
  // equal low bits of a read and a write stream are what 4K aliasing needs).
  std::map<int32_t, int64_t> offset_of;
  if (plan)
    for (size_t i = 0; i < plan->liveness.buffers.size(); ++i)
      if (plan->liveness.buffers[i].value.valid()) offset_of[plan->liveness.buffers[i].value.index] = plan->offsets[i];
  auto where = [&](ValueId v) {
    const auto it = v.valid() ? offset_of.find(v.index) : offset_of.end();
    return it == offset_of.end() ? std::string("-") : fmt_number("%.0f", static_cast<double>(it->second % 4096));
  };
  std::sort(nodes.rbegin(), nodes.rend());
  for (size_t i = 0; i < nodes.size() && static_cast<int>(i) < top; ++i) {
    const Node& n = graph.node(NodeId{nodes[i].second});
    const Value& y = graph.value(n.outputs.at(0));
    std::printf("  %8.1f us  %-10s %-50s %s", nodes[i].first, n.op.c_str(), n.name.c_str(),
                shape_to_string(y.shape).c_str());
    if (plan) std::printf("  in %s out %s (mod 4096)", where(n.inputs.at(0)).c_str(), where(n.outputs.at(0)).c_str());
    std::printf("\n");
  }
  return 0;
}

std::string fmt_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}
std::string fmt_ms(double ms) { return fmt_number("%.2f", ms); }

struct Sample {
  double wall_ms = -1, cpu_ms = -1;
  long peak_rss_kib = -1;
  std::map<std::string, double> extra;
};

// Runs `argv` as a child process, reads its "key value" lines, and its peak RSS.
Sample run_child(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  Sample s;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return s;
  s.peak_rss_kib = usage.ru_maxrss;
  std::istringstream lines(text);
  for (std::string key; lines >> key;) {
    double value = 0;
    if (!(lines >> value)) break;
    if (key == "latency_ms")
      s.wall_ms = value;
    else if (key == "cpu_ms")
      s.cpu_ms = value;
    else
      s.extra[key] = value;
  }
  return s;
}

int bench(int argc, char** argv) {
  int rounds = 3, runs = 15, threads = 1;
  std::string baseline;
  std::vector<std::string> configs{"fast", "reference", "arena", "ort"};
  std::vector<std::string> models{"resnet18",           "mobilenet_v2",    "squeezenet1_0",
                                  "shufflenet_v2_x1_0", "efficientnet_b0", "mnasnet0_5"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rounds") {
      rounds = std::atoi(argv[i + 1]);
    } else if (flag == "--runs") {
      runs = std::atoi(argv[i + 1]);
    } else if (flag == "--models") {
      models.clear();
      std::istringstream list(argv[i + 1]);
      for (std::string m; std::getline(list, m, ',');) models.push_back(m);
    } else if (flag == "--configs") {
      configs.clear();
      std::istringstream list(argv[i + 1]);
      for (std::string c; std::getline(list, c, ',');) configs.push_back(c);
    } else if (flag == "--baseline") {
      baseline = argv[i + 1];
    } else if (flag == "--threads") {
      threads = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  const std::string self = fs::canonical("/proc/self/exe").string();
  // __FILE__ is relative under a compiler cache's base directory: then the source tree is the
  // working directory.
  fs::path script = fs::path(__FILE__).parent_path().parent_path().parent_path() / "tests/ort/run_model.mjs";
  if (!fs::exists(script)) script = fs::current_path() / "tests/ort/run_model.mjs";
  if (!baseline.empty()) configs.insert(configs.begin(), "baseline");
  std::printf(
      "| model | baseline fast ms | fast ms | reference ms | fast in arena ms | onnxruntime ms | baseline / ort | fast "
      "/ "
      "ort | arena / fast | peak RSS baseline / fast / reference / arena / ort (MiB) | RSS fast / ort |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  for (const std::string& name : models) {
    const fs::path model = corpus_dir() / (name + ".onnx"), input = corpus_dir() / (name + ".input.npy");
    if (!fs::exists(model) || !fs::exists(input)) {
      std::fprintf(stderr, "missing %s\n", model.c_str());
      continue;
    }
    const Graph probe = import_onnx_file(model.string());
    const std::string input_name = probe.value(probe.inputs().at(0)).name;
    std::map<std::string, std::vector<double>> cpu, wall;
    std::map<std::string, long> rss;
    for (int round = 0; round < rounds; ++round)
      for (const std::string& config : configs) {
        const Sample s = config == "ort"
                             ? run_child({"node", script.string(), model.string(), "/tmp/memledger_bench_ort",
                                          input_name + "=" + input.string(), "--repeat", std::to_string(runs),
                                          "--optimize", "--threads", std::to_string(threads)})
                         : config == "baseline" ? run_child({baseline, "--child", model.string(), input.string(),
                                                             "fast", std::to_string(runs), std::to_string(threads)})
                                                : run_child({self, "--child", model.string(), input.string(), config,
                                                             std::to_string(runs), std::to_string(threads)});
        if (s.cpu_ms < 0) {
          std::fprintf(stderr, "%s %s failed\n", name.c_str(), config.c_str());
          continue;
        }
        cpu[config].push_back(threads > 1 ? s.wall_ms : s.cpu_ms);  // the table's figure
        wall[config].push_back(s.wall_ms);
        rss[config] = std::max(rss[config], s.peak_rss_kib);
        std::fprintf(stderr, "%s round %d %-9s cpu %.2f ms wall %.2f ms rss %ld KiB\n", name.c_str(), round,
                     config.c_str(), s.cpu_ms, s.wall_ms, s.peak_rss_kib);
      }
    // A configuration not run shows as "-".
    auto ms = [&](const std::string& c) { return cpu[c].empty() ? std::string("-") : fmt_ms(median(cpu[c])); };
    auto ratio = [&](const std::string& a, const std::string& b, const char* format) {
      if (cpu[a].empty() || cpu[b].empty()) return std::string("-");
      return fmt_number(format, median(cpu[a]) / median(cpu[b]));
    };
    auto mib = [&](const std::string& c) { return rss.count(c) ? fmt_number("%.0f", rss[c] / 1024.0) : "-"; };
    const std::string rss_ratio =
        rss.count("fast") && rss.count("ort") ? fmt_number("%.2f", double(rss["fast"]) / double(rss["ort"])) : "-";
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s / %s / %s | %s |\n", name.c_str(),
                ms("baseline").c_str(), ms("fast").c_str(), ms("reference").c_str(), ms("arena").c_str(),
                ms("ort").c_str(), ratio("baseline", "ort", "%.2f").c_str(), ratio("fast", "ort", "%.2f").c_str(),
                ratio("arena", "fast", "%.3f").c_str(), mib("baseline").c_str(), mib("fast").c_str(),
                mib("reference").c_str(), mib("arena").c_str(), mib("ort").c_str(), rss_ratio.c_str());
    std::printf("<!-- %s wall medians:", name.c_str());
    for (const std::string& c : configs) std::printf(" %s %.2f", c.c_str(), median(wall[c]));
    std::printf(threads > 1 ? "; wall medians (the table's, with threads):"
                            : "; CPU medians:");  // every configuration, those without a column too (arena-stretched)
    for (const std::string& c : configs) std::printf(" %s %.2f", c.c_str(), median(cpu[c]));
    std::printf(" -->\n");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace memledger

int main(int argc, char** argv) {
  try {
    if (argc >= 6 && std::string(argv[1]) == "--profile")
      return memledger::profile(argv[2], argv[3], argv[4], std::atoi(argv[5]), argc > 6 ? std::atoi(argv[6]) : 20);
    if ((argc == 6 || argc == 7) && std::string(argv[1]) == "--child")
      return memledger::child(argv[2], argv[3], argv[4], std::atoi(argv[5]), argc == 7 ? std::atoi(argv[6]) : 1);
    return memledger::bench(argc, argv);
  } catch (const memledger::Error& e) {
    std::fprintf(stderr, "model_latency_bench: %s\n", e.what());
    return 2;
  }
}
