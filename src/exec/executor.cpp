#include "memledger/exec/executor.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "exec/fast/layout.h"
#include "exec/fast/prepared_node.h"
#include "kernel.h"
#include "memledger/core/checked.h"
#include "memledger/device/tensor_layout.h"
#include "memledger/ir/integer_node.h"
#include "memledger/ir/op_table.h"

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

std::string dtype_reason(const Graph& graph, const Node& node) {
  for (const auto& list : {node.inputs, node.outputs})
    for (ValueId v : list)
      if (v.valid())
        if (auto why = supported_dtype_reason(graph.value(v)); !why.empty()) return why;
  return {};
}

std::string reference_reason(const Graph& graph, const Node& node) {
  const exec::Kernel* kernel = exec::find_kernel(node);
  if (!kernel) return fmt::format("operator {} has no kernel: memledger can plan it but not run it", op_name(node));
  if (auto why = dtype_reason(graph, node); !why.empty()) return why;
  try {
    return kernel->check(graph, node);
  } catch (const Error& e) {
    return e.what();
  }
}

// Why a node the fast set has a kernel for may not run fast: the reference kernel's own
// check (training modes, attributes it refuses) holds for the fast kernel too.
// An integer node runs on the reference integer kernels unless the fast set has its integer
// form (fast/prepared_node.h).
std::string fast_blocker(const Graph& graph, const Node& node, const std::vector<std::string>& reference_nodes) {
  if (std::find(reference_nodes.begin(), reference_nodes.end(), node.name) != reference_nodes.end())
    return "asked to run on the reference kernels (ExecOptions::reference_nodes)";
  if (is_integer_node(graph, node) && !exec::fast::has_fast_integer_form(graph, node))
    return "an integer operator: the fast set has no integer kernel for it";
  if (auto why = dtype_reason(graph, node); !why.empty()) return why;
  if (const exec::Kernel* kernel = exec::find_kernel(node)) {
    try {
      return kernel->check(graph, node);
    } catch (const Error& e) {
      return e.what();
    }
  }
  return {};
}

// The fast kernel of a node on its own (every value row-major), when the fast set takes it.
std::unique_ptr<exec::fast::PreparedNode> prepare_fast(const Graph& graph, const Node& node,
                                                       const exec::fast::PrepareOptions& options, std::string& why) {
  if (!exec::fast::has_fast_kernel(graph, node)) return nullptr;
  if (why = fast_blocker(graph, node, {}); !why.empty()) return nullptr;
  return exec::fast::prepare(graph, node, options, why);
}

// The whole graph prepared with the fast set, activations' byte order chosen (fast/layout.h).
exec::fast::PreparedGraph prepare_fast_graph(const Graph& graph, const exec::fast::PrepareOptions& options,
                                             const std::vector<std::string>& reference_nodes) {
  return exec::fast::prepare_graph(graph, options, [&graph, &reference_nodes](const Node& node) {
    return fast_blocker(graph, node, reference_nodes);
  });
}

KernelContract reference_contract(const Graph& graph, NodeId id, const DeviceProfile& profile) {
  return op_contract(graph, id, profile);
}

}  // namespace

std::string_view kernel_set_name(KernelSet set) { return set == KernelSet::kFast ? "fast" : "reference"; }

std::optional<KernelSet> parse_kernel_set(std::string_view text) {
  if (text == "fast") return KernelSet::kFast;
  if (text == "reference") return KernelSet::kReference;
  return std::nullopt;
}

namespace {

// What the fast set's preparation declared of each node, by node index, and the contract
// that follows: a node it does not run has the reference kernels' contract.
struct PreparedContracts {
  std::vector<int64_t> workspace;  // -1: the reference kernel runs it
  std::vector<uint8_t> in_place;   // the fast kernel keeps the in-place promise

  void record(NodeId id, const exec::fast::PreparedNode* node) {
    const auto index = static_cast<size_t>(id.index);
    if (workspace.size() <= index) {
      workspace.resize(index + 1, -1);
      in_place.resize(index + 1, 0);
    }
    workspace[index] = node ? node->workspace_bytes() : -1;
    in_place[index] = node && node->keeps_in_place_promise();
  }

  KernelContract of(const Graph& graph, NodeId id, const DeviceProfile& profile) const {
    const auto index = static_cast<size_t>(id.index);
    if (index >= workspace.size() || workspace[index] < 0) return reference_contract(graph, id, profile);
    KernelContract contract;
    contract.workspace_bytes = workspace[index];
    // The op table's in-place promise holds where the fast kernel says it keeps it
    // (elementwise ones; a Conv reading channels-last input directly does not).
    if (in_place[index] && op_is_known(graph.node(id), profile))
      contract.overwritable_inputs = op_contract(graph, id, profile).overwritable_inputs;
    return contract;
  }
};

}  // namespace

ContractSource contract_source(const ExecOptions& exec) {
  if (exec.kernels == KernelSet::kReference) return reference_contract;
  const exec::fast::PrepareOptions options{
      .threads = exec.threads, .prepack_weights = exec.prepack_weights, .contract_only = true};
  // The byte order of the activations is chosen for the whole graph: prepared once per
  // graph the source is asked about, as the Executor will prepare it.
  struct Cache {
    const Graph* graph = nullptr;
    size_t values = 0, nodes = 0;
    PreparedContracts contracts;
  };
  auto cache = std::make_shared<Cache>();
  return [options, cache, reference_nodes = exec.reference_nodes](const Graph& graph, NodeId id,
                                                                  const DeviceProfile& profile) {
    if (cache->graph != &graph || cache->values != graph.value_count() || cache->nodes != graph.order().size()) {
      const exec::fast::PreparedGraph prepared = prepare_fast_graph(graph, options, reference_nodes);
      *cache = Cache{.graph = &graph, .values = graph.value_count(), .nodes = graph.order().size(), .contracts = {}};
      for (size_t i = 0; i < graph.order().size(); ++i)
        cache->contracts.record(graph.order()[i], prepared.nodes[i].get());
    }
    return cache->contracts.of(graph, id, profile);
  };
}

std::string unsupported_reason(const Graph& graph, NodeId id, KernelSet set) {
  const Node& node = graph.node(id);
  if (set == KernelSet::kFast) {
    std::string why;
    if (prepare_fast(graph, node, {.threads = 1, .prepack_weights = true, .contract_only = true}, why)) return {};
  }
  return reference_reason(graph, node);
}

std::string unsupported_reason(const Graph& graph, NodeId id) { return reference_reason(graph, graph.node(id)); }

struct Executor::State {
  const Graph& graph;
  ExecOptions options;
  struct Step {
    NodeId id;
    const exec::Kernel* reference = nullptr;
    std::unique_ptr<exec::fast::PreparedNode> fast;
    int64_t workspace_bytes = 0;
    exec::KernelContext ctx;
    std::vector<ValueId> release_after;  // values whose last reader (or producer) this step is
    ValueId forward_from;                // the forwarded (or in-place) input, when its buffer may become output 0's
    // Mapped constants whose last reader this step is (ExecOptions::release_weights_after_use).
    std::vector<const Tensor*> release_constants_after;
  };
  std::vector<Step> steps;
  std::vector<ValueId> release_at_start;      // graph inputs nothing reads
  std::vector<std::span<std::byte>> buffers;  // by value index
  std::vector<uint8_t> held;                  // by value index: the provider holds a buffer
  std::vector<int64_t> bytes;                 // by value index: the host layout's bytes
  std::vector<uint8_t> channels_last;         // by value index (fast/layout.h)
  std::string summary;
};

Executor::Executor(const Graph& graph, ExecOptions options)
    : state_(std::make_unique<State>(State{.graph = graph, .options = options})) {
  State& s = *state_;
  if (options.threads < 1) fail("threads must be at least 1, got {}", options.threads);
  if (!options.reference_nodes.empty()) {  // a name that matches nothing is a caller's mistake, not a no-op
    std::set<std::string_view> names;
    for (NodeId id : graph.order()) names.insert(graph.node(id).name);
    for (const std::string& name : options.reference_nodes)
      if (!names.contains(name)) fail("reference_nodes: the graph has no node named '{}'", name);
  }
  for (ValueId id : graph.inputs())
    if (auto why = supported_dtype_reason(graph.value(id)); !why.empty())
      fail("input '{}': {}", graph.value(id).name, why);
  const auto& order = graph.order();
  const int end_step = static_cast<int>(order.size());
  std::map<std::string, int> reference_ops;
  int fast_count = 0;
  exec::fast::PreparedGraph prepared;
  if (options.kernels == KernelSet::kFast)
    prepared = prepare_fast_graph(
        graph, {.threads = options.threads, .prepack_weights = options.prepack_weights, .contract_only = false},
        options.reference_nodes);
  s.channels_last = prepared.channels_last;
  s.channels_last.resize(graph.value_count(), 0);
  for (size_t position = 0; position < order.size(); ++position) {
    const NodeId id = order[position];
    const Node& node = graph.node(id);
    State::Step step{.id = id,
                     .reference = nullptr,
                     .fast = nullptr,
                     .workspace_bytes = 0,
                     .ctx = {.graph = graph, .node = node, .inputs = {}, .outputs = {}, .workspace = {}},
                     .release_after = {},
                     .release_constants_after = {}};
    if (options.kernels == KernelSet::kFast) step.fast = std::move(prepared.nodes[position]);
    if (step.fast) {
      step.workspace_bytes = step.fast->workspace_bytes();
      ++fast_count;
    } else {
      if (auto reason = reference_reason(graph, node); !reason.empty()) fail("node {}: {}", node.label(), reason);
      step.reference = exec::find_kernel(node);
      step.workspace_bytes = op_contract(graph, id, host_profile()).workspace_bytes;
      ++reference_ops[node.op];
    }
    for (ValueId v : node.inputs) {
      exec::InputView view;
      if (v.valid()) {
        const Value& value = graph.value(v);
        view.dtype = value.dtype;
        view.shape = value.shape;
      }
      step.ctx.inputs.push_back(std::move(view));
    }
    for (ValueId v : node.outputs) {
      exec::OutputView view;
      if (v.valid()) {
        view.dtype = graph.value(v).dtype;
        view.shape = graph.value(v).shape;
      }
      step.ctx.outputs.push_back(std::move(view));
    }
    s.steps.push_back(std::move(step));
  }

  // When each value is released: after its last reader; graph outputs at the end.
  std::vector<int> last_use(graph.value_count(), -2);  // -2: never read
  for (int step = 0; step < end_step; ++step)
    for (ValueId v : graph.node(order[step]).inputs)
      if (v.valid()) last_use[v.index] = step;
  for (ValueId v : graph.outputs()) last_use[v.index] = end_step;
  for (ValueId v : graph.inputs())
    if (last_use[v.index] < 0) s.release_at_start.push_back(v);
  for (int step = 0; step < end_step; ++step) {
    const Node& node = graph.node(order[step]);
    std::set<ValueId> done(node.inputs.begin(), node.inputs.end());
    done.insert(node.outputs.begin(), node.outputs.end());
    for (ValueId v : done)
      if (v.valid() && !graph.value(v).is_constant() && last_use[v.index] <= step)
        s.steps[step].release_after.push_back(v);
    const auto& fast = s.steps[step].fast;
    // The forwarded input, or one an elementwise kernel runs in place over.
    const int forwarded = !fast ? -1 : fast->forwarded_input() >= 0 ? fast->forwarded_input() : fast->in_place_input();
    if (forwarded >= 0 && static_cast<size_t>(forwarded) < node.inputs.size() &&
        node.inputs[static_cast<size_t>(forwarded)].valid() && node.outputs.size() == 1 && node.outputs[0].valid()) {
      const ValueId in = node.inputs[static_cast<size_t>(forwarded)], out = node.outputs[0];
      if (!graph.value(in).is_constant() && !graph.is_graph_input(in) && last_use[in.index] == step &&
          !graph.is_graph_output(out) && buffer_bytes(graph.value(in)) == buffer_bytes(graph.value(out)))
        s.steps[step].forward_from = in;
    }
    if (options.release_weights_after_use)
      for (ValueId v : done)
        if (v.valid() && graph.value(v).is_constant() && graph.value(v).constant->is_mapped() &&
            last_use[v.index] == step)
          s.steps[step].release_constants_after.push_back(&*graph.value(v).constant);
  }
  s.buffers.resize(graph.value_count());
  s.held.resize(graph.value_count(), 0);
  s.bytes.resize(graph.value_count(), 0);
  for (size_t i = 0; i < graph.value_count(); ++i) {
    const Value& v = graph.value(ValueId{static_cast<int32_t>(i)});
    if (!v.is_constant() && supported_dtype_reason(v).empty()) s.bytes[i] = buffer_bytes(v);
  }

  const int total = static_cast<int>(order.size());
  if (options.kernels == KernelSet::kReference) {
    s.summary = fmt::format("reference kernels on all {} nodes", total);
  } else {
    std::string others;
    for (const auto& [op, count] : reference_ops)
      others += fmt::format("{}{} {}", others.empty() ? "" : ", ", op, count);
    s.summary = fmt::format("fast kernels (oneDNN, {} thread{}) on {} of {} nodes{}", options.threads,
                            options.threads == 1 ? "" : "s", fast_count, total,
                            others.empty() ? "" : fmt::format(", reference on {} ({})", total - fast_count, others));
    int64_t packed = 0;
    for (const auto& step : s.steps) packed += step.fast ? step.fast->prepacked_bytes() : 0;
    s.summary += options.prepack_weights ? fmt::format("; weights prepacked once: {} B held outside the plan", packed)
                                         : std::string("; weights reordered on every run, in the declared workspaces");
    // A TFLite model's activations are NHWC by their own shapes: nothing for the byte-order
    // machinery (fast/layout.h) to change, which counts only values it lays out anew.
    const bool own_nhwc = std::any_of(order.begin(), order.end(), [&graph](NodeId id) {
      const std::string& domain = graph.node(id).domain;
      return domain == kTfliteDomain || domain == kTfliteCustomDomain;
    });
    s.summary += own_nhwc ? std::string("; activations NHWC as the TFLite model lays them out")
                          : fmt::format("; {} activations channels-last (NHWC) between fast nodes",
                                        prepared.channels_last_values);
  }
}

Executor::~Executor() = default;

const ExecOptions& Executor::options() const { return state_->options; }

const Graph& Executor::graph() const { return state_->graph; }

ContractSource Executor::contract_source() const {
  if (state_->options.kernels == KernelSet::kReference) return reference_contract;
  PreparedContracts contracts;
  for (const auto& step : state_->steps) contracts.record(step.id, step.fast.get());
  const Graph* graph = &state_->graph;
  return [graph, contracts = std::move(contracts)](const Graph& g, NodeId id, const DeviceProfile& profile) {
    ML_CHECK(&g == graph, "an executor's contracts asked about another graph");
    return contracts.of(g, id, profile);
  };
}

KernelSet Executor::kernel_set_of(NodeId node) const {
  for (const auto& step : state_->steps)
    if (step.id == node) return step.fast ? KernelSet::kFast : KernelSet::kReference;
  fail("node #{} is not in the execution order", node.index);
}

std::string Executor::fast_kernel_of(NodeId node) const {
  for (const auto& step : state_->steps)
    if (step.id == node) return step.fast ? step.fast->describe() : std::string();
  fail("node #{} is not in the execution order", node.index);
}

int Executor::fast_node_count() const {
  int n = 0;
  for (const auto& step : state_->steps) n += step.fast ? 1 : 0;
  return n;
}

std::string Executor::summary() const { return state_->summary; }

bool Executor::channels_last(ValueId value) const {
  return value.valid() && static_cast<size_t>(value.index) < state_->channels_last.size() &&
         state_->channels_last[static_cast<size_t>(value.index)] != 0;
}

int64_t Executor::prepacked_bytes() const {
  int64_t bytes = 0;
  for (const auto& step : state_->steps) bytes += step.fast ? step.fast->prepacked_bytes() : 0;
  return bytes;
}

std::vector<Tensor> Executor::make_outputs() const {
  // The output tensors count against the memory limit too, before any is allocated.
  int64_t bytes = 0;
  for (ValueId id : state_->graph.outputs()) {
    const Value& v = state_->graph.value(id);
    if (v.is_constant()) continue;
    bytes = checked_add(bytes, state_->bytes[id.index], "the graph's outputs");
    if (bytes > state_->options.max_memory_bytes)
      fail_option(ErrorOption::kMemoryLimit,
                  "node {}: graph output '{}' needs {} B; with the other outputs that passes the memory limit of {} B",
                  v.producer.valid() ? state_->graph.node(v.producer).label() : std::string("-"), v.name,
                  state_->bytes[id.index], state_->options.max_memory_bytes);
  }
  std::vector<Tensor> outputs;
  for (ValueId id : state_->graph.outputs()) {
    const Value& v = state_->graph.value(id);
    outputs.push_back(v.is_constant() ? *v.constant : Tensor(v.dtype, v.shape));
  }
  return outputs;
}

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs, BufferProvider* provider,
                                  const std::function<void(NodeId)>& after_node) {
  std::vector<Tensor> outputs = make_outputs();
  HeapBufferProvider heap;
  run_into(inputs, outputs, provider ? *provider : heap, after_node);
  return outputs;
}

void Executor::run_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, BufferProvider& provider,
                        const std::function<void(NodeId)>& after_node) {
  State& s = *state_;
  const Graph& graph = s.graph;
  const auto& graph_inputs = graph.inputs();
  if (inputs.size() != graph_inputs.size())
    fail("the graph has {} inputs, {} given", graph_inputs.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph_inputs[i]);
    if (inputs[i].dtype() != v.dtype || inputs[i].shape() != v.shape)
      fail("input '{}': expected {} {}, got {} {}", v.name, dtype_name(v.dtype), shape_to_string(v.shape),
           dtype_name(inputs[i].dtype()), shape_to_string(inputs[i].shape()));
  }
  ML_CHECK(outputs.size() == graph.outputs().size(), "{} output tensors for {} graph outputs", outputs.size(),
           graph.outputs().size());
  if (s.options.kernels == KernelSet::kFast) exec::fast::set_threads(s.options.threads);

  int64_t live_bytes = 0;
  // Messages are built only on a refusal: a run allocates nothing of its own.
  auto reserve = [&](int64_t bytes, const Node* node, const Value* value) {
    if (bytes <= s.options.max_memory_bytes - live_bytes) {
      live_bytes += bytes;
      return;
    }
    fail_option(
        ErrorOption::kMemoryLimit, "{}: {} needs {} B; with {} B already live that passes the memory limit of {} B",
        node ? "node " + node->label() : std::string("graph input"),
        value ? "'" + value->name + "'" : std::string("its workspace"), bytes, live_bytes, s.options.max_memory_bytes);
  };
  auto take = [&](ValueId v, const Node* node) {
    const Value& value = graph.value(v);
    reserve(s.bytes[v.index], node, &value);
    auto buffer = provider.value_buffer(v, s.bytes[v.index]);
    ML_CHECK(static_cast<int64_t>(buffer.size()) >= dense_bytes(value), "provider gave a short buffer for '{}'",
             value.name);
    s.buffers[v.index] = buffer;
    s.held[v.index] = 1;
    return buffer;
  };
  auto release = [&](ValueId v) {
    if (!s.held[v.index]) return;
    provider.release(v);
    live_bytes -= s.bytes[v.index];
    s.held[v.index] = 0;
  };
  // On an error midway, everything the provider still holds goes back.
  struct ReleaseAll {
    State& s;
    BufferProvider& provider;
    bool armed = true;
    ~ReleaseAll() {
      if (!armed) return;
      for (size_t i = 0; i < s.held.size(); ++i)
        if (s.held[i]) {
          provider.release(ValueId{static_cast<int32_t>(i)});
          s.held[i] = 0;
        }
    }
  } guard{s, provider};

  for (size_t i = 0; i < inputs.size(); ++i) {
    auto buffer = take(graph_inputs[i], nullptr);
    if (!inputs[i].bytes().empty()) std::memcpy(buffer.data(), inputs[i].bytes().data(), inputs[i].bytes().size());
  }
  for (ValueId v : s.release_at_start) release(v);

  static const std::byte empty_input{};
  static std::byte empty_output{};
  for (State::Step& step : s.steps) {
    const Node& node = graph.node(step.id);
    exec::KernelContext& ctx = step.ctx;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (!v.valid()) continue;
      const Value& value = graph.value(v);
      const std::byte* data = nullptr;
      if (value.is_constant()) {
        data = value.constant->bytes().data();
      } else {
        ML_CHECK(s.held[v.index], "node {} reads '{}' before it is computed", node.label(), value.name);
        data = s.buffers[v.index].data();
      }
      // An empty tensor still counts as present.
      ctx.inputs[i].data = data ? data : &empty_input;
    }
    // A node that forwards its input (an activation fused into the Conv before it) or runs
    // in place over it (an elementwise fast kernel) may take that input's buffer when nothing
    // reads the input afterwards and the provider places buffers itself (the heap); in a
    // planned arena the plan decides.
    if (step.forward_from.valid() && s.held[step.forward_from.index] &&
        provider.move_buffer(step.forward_from, node.outputs[0])) {
      const ValueId out = node.outputs[0];
      s.buffers[out.index] = s.buffers[step.forward_from.index];
      s.held[out.index] = 1;
      s.held[step.forward_from.index] = 0;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const ValueId v = node.outputs[i];
      if (!v.valid()) continue;
      if (s.held[v.index]) {  // forwarded above
        ctx.outputs[i].data = s.buffers[v.index].data();
        continue;
      }
      auto buffer = take(v, &node);
      ctx.outputs[i].data = buffer.data() ? buffer.data() : &empty_output;
    }
    ctx.workspace = {};
    if (step.workspace_bytes > 0) {
      reserve(step.workspace_bytes, &node, nullptr);
      ctx.workspace = provider.workspace(step.id, step.workspace_bytes);
      ML_CHECK(static_cast<int64_t>(ctx.workspace.size()) == step.workspace_bytes,
               "provider gave node {} a workspace of the wrong size", node.label());
    }
    if (step.fast)
      step.fast->run(ctx);
    else
      step.reference->run(ctx);
    if (after_node) after_node(step.id);
    if (step.workspace_bytes > 0) {
      provider.release_workspace(step.id);
      live_bytes -= step.workspace_bytes;
    }
    for (ValueId v : step.release_after) release(v);
    for (const Tensor* constant : step.release_constants_after) constant->release_pages();
  }

  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ValueId id = graph.outputs()[i];
    const Value& v = graph.value(id);
    if (v.is_constant()) continue;
    ML_CHECK(s.held[id.index], "graph output '{}' was never computed", v.name);
    ML_CHECK(outputs[i].dtype() == v.dtype && outputs[i].shape() == v.shape, "output tensor {} has the wrong shape", i);
    if (!outputs[i].bytes().empty())
      std::memcpy(outputs[i].bytes().data(), s.buffers[id.index].data(), outputs[i].bytes().size());
  }
  for (ValueId id : graph.outputs()) release(id);
  guard.armed = false;
}

}  // namespace memledger
