#include "memledger/exec/interpreter.h"

#include <cmath>
#include <cstring>
#include <numbers>
#include <set>
#include <unordered_map>

#include "kernel.h"
#include "memledger/core/checked.h"
#include "memledger/device/tensor_layout.h"

namespace memledger {
namespace {

const DeviceProfile& host_profile() {
  static const DeviceProfile profile = builtin_profile("host");
  return profile;
}

int64_t dense_bytes(const Value& v) { return element_count(v.shape, v.name) * host_element_bytes(v.dtype); }

int64_t buffer_bytes(const Value& v) {
  const int64_t bytes = tensor_layout(host_profile(), v.shape, v.dtype, v.roles).bytes();
  ML_CHECK(bytes >= dense_bytes(v), "host layout of '{}' smaller than its elements", v.name);
  return bytes;
}

std::string supported_dtype_reason(const Value& v) {
  if (v.dtype == DType::kInt4 || v.dtype == DType::kUInt4)
    return fmt::format("value '{}' is {} (the interpreter holds no packed types)", v.name, dtype_name(v.dtype));
  return {};
}

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

std::string unsupported_reason(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  const exec::Kernel* kernel = exec::find_kernel(node);
  if (!kernel) return fmt::format("operator {} has no kernel: memledger can plan it but not run it", op_name(node));
  for (const auto& list : {node.inputs, node.outputs})
    for (ValueId v : list)
      if (v.valid())
        if (auto why = supported_dtype_reason(graph.value(v)); !why.empty()) return why;
  try {
    return kernel->check(graph, node);
  } catch (const Error& e) {
    return e.what();
  }
}

std::vector<Tensor> run_graph(const Graph& graph, const std::vector<Tensor>& inputs, const RunOptions& options) {
  const auto& graph_inputs = graph.inputs();
  if (inputs.size() != graph_inputs.size())
    fail("the graph has {} inputs, {} given", graph_inputs.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph_inputs[i]);
    if (inputs[i].dtype() != v.dtype || inputs[i].shape() != v.shape)
      fail("input '{}': expected {} {}, got {} {}", v.name, dtype_name(v.dtype), shape_to_string(v.shape),
           dtype_name(inputs[i].dtype()), shape_to_string(inputs[i].shape()));
    if (auto why = supported_dtype_reason(v); !why.empty()) fail("input '{}': {}", v.name, why);
  }
  for (NodeId id : graph.order())
    if (auto why = unsupported_reason(graph, id); !why.empty()) fail("node {}: {}", graph.node(id).label(), why);

  HeapBufferProvider heap;
  BufferProvider& provider = options.provider ? *options.provider : heap;

  // The last step that reads each value; graph outputs are read at the end.
  const auto& order = graph.order();
  const int end_step = static_cast<int>(order.size());
  std::unordered_map<ValueId, int> last_use;
  for (int step = 0; step < end_step; ++step)
    for (ValueId v : graph.node(order[step]).inputs)
      if (v.valid()) last_use[v] = step;
  for (ValueId v : graph.outputs()) last_use[v] = end_step;

  std::unordered_map<ValueId, std::span<std::byte>> buffers;
  int64_t live_bytes = 0;
  auto reserve = [&](int64_t bytes, const std::string& owner, const std::string& what) {
    if (bytes > options.max_memory_bytes - live_bytes)
      fail("{}: {} needs {} B; with {} B already live that passes the memory limit of {} B (--max-memory)", owner, what,
           bytes, live_bytes, options.max_memory_bytes);
    live_bytes += bytes;
  };
  auto release_if_done = [&](ValueId v, int step) {
    auto it = buffers.find(v);
    if (it == buffers.end()) return;
    auto use = last_use.find(v);
    if (use != last_use.end() && use->second > step) return;
    provider.release(v);
    live_bytes -= buffer_bytes(graph.value(v));
    buffers.erase(it);
  };

  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueId id = graph_inputs[i];
    const Value& v = graph.value(id);
    reserve(buffer_bytes(v), "graph input '" + v.name + "'", "its buffer");
    auto buffer = provider.value_buffer(id, buffer_bytes(v));
    ML_CHECK(static_cast<int64_t>(buffer.size()) >= dense_bytes(v), "provider gave a short buffer for '{}'", v.name);
    if (!inputs[i].bytes().empty()) std::memcpy(buffer.data(), inputs[i].bytes().data(), inputs[i].bytes().size());
    buffers[id] = buffer;
  }
  for (ValueId id : graph_inputs) release_if_done(id, -1);

  for (int step = 0; step < end_step; ++step) {
    const NodeId id = order[step];
    const Node& node = graph.node(id);
    const exec::Kernel& kernel = *exec::find_kernel(node);
    const KernelContract contract = op_contract(graph, id, host_profile());

    exec::KernelContext ctx{.graph = graph, .node = node, .inputs = {}, .outputs = {}, .workspace = {}};
    for (ValueId v : node.inputs) {
      exec::InputView view;
      if (v.valid()) {
        const Value& value = graph.value(v);
        view.dtype = value.dtype;
        view.shape = value.shape;
        if (value.is_constant()) {
          view.data = value.constant->bytes().data();
        } else {
          auto it = buffers.find(v);
          ML_CHECK(it != buffers.end(), "node {} reads '{}' before it is computed", node.label(), value.name);
          view.data = it->second.data();
        }
        // An empty tensor still counts as present.
        static const std::byte empty{};
        if (!view.data) view.data = &empty;
      }
      ctx.inputs.push_back(std::move(view));
    }
    for (ValueId v : node.outputs) {
      exec::OutputView view;
      if (v.valid()) {
        const Value& value = graph.value(v);
        reserve(buffer_bytes(value), "node " + node.label(), "output '" + value.name + "'");
        auto buffer = provider.value_buffer(v, buffer_bytes(value));
        ML_CHECK(static_cast<int64_t>(buffer.size()) >= dense_bytes(value), "provider gave a short buffer for '{}'",
                 value.name);
        buffers[v] = buffer;
        view.dtype = value.dtype;
        view.shape = value.shape;
        static std::byte empty{};
        view.data = buffer.data() ? buffer.data() : &empty;
      }
      ctx.outputs.push_back(std::move(view));
    }
    if (contract.workspace_bytes > 0) {
      reserve(contract.workspace_bytes, "node " + node.label(), "its workspace");
      ctx.workspace = provider.workspace(id, contract.workspace_bytes);
      ML_CHECK(static_cast<int64_t>(ctx.workspace.size()) == contract.workspace_bytes,
               "provider gave node {} a workspace of the wrong size", node.label());
    }
    kernel.run(ctx);
    if (options.after_node) options.after_node(id);
    if (contract.workspace_bytes > 0) {
      provider.release_workspace(id);
      live_bytes -= contract.workspace_bytes;
    }
    std::set<ValueId> done(node.inputs.begin(), node.inputs.end());
    done.insert(node.outputs.begin(), node.outputs.end());
    for (ValueId v : done)
      if (v.valid()) release_if_done(v, step);
  }

  std::vector<Tensor> outputs;
  for (ValueId id : graph.outputs()) {
    const Value& v = graph.value(id);
    if (v.is_constant()) {
      outputs.push_back(*v.constant);
      continue;
    }
    auto it = buffers.find(id);
    ML_CHECK(it != buffers.end(), "graph output '{}' was never computed", v.name);
    Tensor t(v.dtype, v.shape);
    if (!t.bytes().empty()) std::memcpy(t.bytes().data(), it->second.data(), t.bytes().size());
    outputs.push_back(std::move(t));
  }
  for (auto& [id, buffer] : buffers) provider.release(id);
  return outputs;
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
  for (ValueId id : graph.inputs()) total = checked_add(total, dense_bytes(graph.value(id)), "the graph's inputs");
  return total;
}

std::vector<Tensor> random_inputs(const Graph& graph, uint64_t seed, int64_t max_bytes) {
  const int64_t bytes = graph_input_bytes(graph);
  if (bytes > max_bytes)
    fail("the graph's inputs hold {} B, more than the memory limit of {} B (--max-memory)", bytes, max_bytes);
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

}  // namespace memledger
