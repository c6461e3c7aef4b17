// The reference interpreter: runs a graph node by node in its execution order with the
// kernels of exec/ (strided and broadcast-aware: a broadcast operand is a zero-stride view,
// never a copy). All activation and workspace memory comes from a BufferProvider; constants
// are read in place from the graph. Single-threaded and deterministic: the same inputs give
// bit-identical outputs wherever the buffers are placed.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/exec/buffer_provider.h"
#include "memledger/exec/kernel_set.h"
#include "memledger/ir/graph.h"

namespace memledger {

struct RunOptions {
  // nullptr: a HeapBufferProvider private to the run.
  BufferProvider* provider = nullptr;
  // Called after each node ran and before its inputs are released (e.g. to check guards).
  std::function<void(NodeId)> after_node;
  // The fast set (oneDNN where it takes a node) unless asked otherwise; threads for it.
  KernelSet kernels = KernelSet::kFast;
  int threads = 1;
  // Activation and workspace bytes live at once; a buffer that would pass it is an Error
  // naming the node, the value and the bytes, raised before the allocation.
  int64_t max_memory_bytes = kDefaultMaxMemoryBytes;
};

// The bytes the graph's inputs hold (what random_inputs or the input files allocate).
int64_t graph_input_bytes(const Graph& graph);

// The reason `node` cannot run with the reference kernels (unsupported operator, dtype or
// attribute), or empty. (The fast set: unsupported_reason(graph, node, set) in executor.h.)
std::string unsupported_reason(const Graph& graph, NodeId node);

// Runs `graph` on `inputs` with a fresh Executor (exec/executor.h prepares once, for many runs) (one per graph input,
// in graph.inputs() order) and returns its outputs in graph.outputs() order. A missing input or one of the wrong dtype
// or shape, or an unsupported node, is an Error naming the input or node; nothing runs then.
std::vector<Tensor> run_graph(const Graph& graph, const std::vector<Tensor>& inputs, const RunOptions& options = {});

// The same, with inputs by name; an input name the graph does not have is an Error.
std::vector<Tensor> run_graph(const Graph& graph, const std::map<std::string, Tensor>& inputs,
                              const RunOptions& options = {});

// The outputs of `node`, every input of which is a constant (or omitted), computed by its
// kernel on a graph of its own; nothing when no kernel runs it or the kernel refuses these
// values. fold-constants' evaluator (PassOptions::evaluate).
std::optional<std::vector<Tensor>> evaluate_constant_node(const Graph& graph, const Node& node);

// Seeded inputs for every graph input: floats N(0,1), integers in a small range, the same
// for the same seed on every machine.
// Inputs holding more than `max_bytes` together are an Error (naming the bytes), not an
// allocation.
std::vector<Tensor> random_inputs(const Graph& graph, uint64_t seed, int64_t max_bytes = kDefaultMaxMemoryBytes);

}  // namespace memledger
