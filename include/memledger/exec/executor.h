// A graph prepared to run many times: which kernel set runs each node, its contract, the
// fast kernels' oneDNN primitives (created here, never inside a run), the views every
// kernel sees and when each value is released. run() then only hands buffers from the
// BufferProvider to the kernels: after the first run it allocates nothing of its own
// (tests/exec/no_allocation_test counts it), so a timed run times the kernels alone.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/exec/kernel_set.h"
#include "memledger/ir/graph.h"

namespace memledger {

class Executor {
 public:
  // Checks every node (an unsupported one is an Error naming it) and prepares it. `graph`
  // must outlive the executor and stay unchanged.
  explicit Executor(const Graph& graph, ExecOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // One run; inputs in graph.inputs() order (checked as run_graph checks them).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, BufferProvider* provider = nullptr,
                          const std::function<void(NodeId)>& after_node = {});
  // The same into `outputs`, already of the graph outputs' dtypes and shapes.
  void run_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, BufferProvider& provider,
                const std::function<void(NodeId)>& after_node = {});
  // Outputs of the right dtypes and shapes for run_into.
  std::vector<Tensor> make_outputs() const;

  const ExecOptions& options() const;
  // The set whose kernel runs `node` (fast only where the fast set takes it).
  KernelSet kernel_set_of(NodeId node) const;
  // What the fast kernel of `node` runs ("binary jit:avx512_core", "gelu (erf) ...", "nothing
  // (...)"), or empty where the reference kernel runs it.
  std::string fast_kernel_of(NodeId node) const;
  // How many nodes the fast kernels run.
  int fast_node_count() const;
  // Whether `value`'s buffer holds its elements channels-last (NHWC) during a run: the fast
  // set keeps activations between its own nodes so (exec/fast/layout.h); graph inputs,
  // outputs and constants are always row-major, and the buffer's size is the same either way.
  bool channels_last(ValueId value) const;
  // Bytes of weights the fast kernels hold reordered (ExecOptions::prepack_weights).
  int64_t prepacked_bytes() const;
  // The contracts of the kernels this executor prepared (what contract_source(options())
  // gives for its graph, without preparing the graph again): for the graph it was made for.
  ContractSource contract_source() const;
  const Graph& graph() const;
  // "fast (oneDNN) on 118 of 140 nodes, reference on 22 (Shape, Gather ...)" for reports.
  std::string summary() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The reason `node` cannot run with `set` (unsupported operator, dtype or attribute), or empty.
std::string unsupported_reason(const Graph& graph, NodeId node, KernelSet set);

}  // namespace memledger
