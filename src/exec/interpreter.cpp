#include "memledger/exec/interpreter.h"

#include <cmath>
#include <numbers>
#include <set>

#include "memledger/core/checked.h"
#include "memledger/exec/executor.h"

namespace memledger {
namespace {

// splitmix64: a tiny generator whose sequence is fixed by its definition, so seeded inputs
// are the same with every standard library.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0,1)
};

}  // namespace

std::vector<Tensor> run_graph(const Graph& graph, const std::vector<Tensor>& inputs, const RunOptions& options) {
  Executor executor(
      graph, {.kernels = options.kernels, .threads = options.threads, .max_memory_bytes = options.max_memory_bytes});
  return executor.run(inputs, options.provider, options.after_node);
}

std::vector<Tensor> run_graph(const Graph& graph, const std::map<std::string, Tensor>& inputs,
                              const RunOptions& options) {
  std::vector<Tensor> ordered;
  std::set<std::string> used;
  for (ValueId id : graph.inputs()) {
    const std::string& name = graph.value(id).name;
    auto it = inputs.find(name);
    if (it == inputs.end()) fail("input '{}' is not given", name);
    ordered.push_back(it->second);
    used.insert(name);
  }
  for (const auto& [name, tensor] : inputs)
    if (!used.count(name)) fail("input '{}' given, but the graph has no input of that name", name);
  return run_graph(graph, ordered, options);
}

int64_t graph_input_bytes(const Graph& graph) {
  int64_t total = 0;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    total = checked_add(total, checked_mul(element_count(v.shape, v.name), host_element_bytes(v.dtype), v.name),
                        "the graph's inputs");
  }
  return total;
}

std::vector<Tensor> random_inputs(const Graph& graph, uint64_t seed, int64_t max_bytes) {
  const int64_t bytes = graph_input_bytes(graph);
  if (bytes > max_bytes)
    fail_option(ErrorOption::kMemoryLimit, "the graph's inputs hold {} B, more than the memory limit of {} B", bytes,
                max_bytes);
  std::vector<Tensor> result;
  SplitMix rng{seed};
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    Tensor t(v.dtype, v.shape);
    for (int64_t i = 0; i < t.elements(); ++i) {
      if (dtype_is_float(v.dtype)) {
        // Box–Muller: N(0,1) from two uniforms.
        const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
        t.set_element_from_double(i, std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2));
      } else if (v.dtype == DType::kBool) {
        t.set_element_from_double(i, static_cast<double>(rng.next() & 1));
      } else {
        t.set_element_from_double(i, static_cast<double>(rng.next() % 10));  // small, valid as an index too
      }
    }
    result.push_back(std::move(t));
  }
  return result;
}

std::optional<std::vector<Tensor>> evaluate_constant_node(const Graph& graph, const Node& node) {
  Graph g;
  g.opset = graph.opset;
  Node copy = node;
  for (ValueId& v : copy.inputs) {
    if (!v.valid()) continue;
    const Value& value = graph.value(v);
    if (!value.is_constant()) return std::nullopt;
    v = g.add_constant(value.name, *value.constant, value.roles);
  }
  std::vector<ValueId> outputs;
  for (ValueId& v : copy.outputs) {
    if (!v.valid()) continue;
    const Value& value = graph.value(v);
    v = g.add_value({.name = value.name, .dtype = value.dtype, .shape = value.shape, .roles = value.roles});
    outputs.push_back(v);
  }
  const NodeId id = g.add_node(std::move(copy));
  for (ValueId v : outputs) g.mark_output(v);
  if (!unsupported_reason(g, id).empty()) return std::nullopt;
  try {
    return run_graph(g, std::vector<Tensor>{});
  } catch (const Error&) {
    return std::nullopt;  // the kernel refuses these values: the run reports it
  }
}

}  // namespace memledger
