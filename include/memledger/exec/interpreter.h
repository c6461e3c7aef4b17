// The reference interpreter: runs a graph node by node in its execution order with the
// kernels of exec/ (strided and broadcast-aware: a broadcast operand is a zero-stride view,
// never a copy). All activation and workspace memory comes from a BufferProvider; constants
// are read in place from the graph. Single-threaded and deterministic: the same inputs give
// bit-identical outputs wherever the buffers are placed.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/exec/buffer_provider.h"
#include "memledger/ir/graph.h"

namespace memledger {

// What the interpreter may hold at once unless told otherwise (`run --max-memory`).
inline constexpr int64_t kDefaultMaxMemoryBytes = int64_t{2} << 30;

struct RunOptions {
  // nullptr: a HeapBufferProvider private to the run.
  BufferProvider* provider = nullptr;
  // Called after each node ran and before its inputs are released (e.g. to check guards).
  std::function<void(NodeId)> after_node;
  // Activation and workspace bytes live at once; a buffer that would pass it is an Error
  // naming the node, the value and the bytes, raised before the allocation.
  int64_t max_memory_bytes = kDefaultMaxMemoryBytes;
};

// The bytes the graph's inputs hold (what random_inputs or the input files allocate).
int64_t graph_input_bytes(const Graph& graph);

// The reason `node` cannot run here (unsupported operator, dtype or attribute), or empty.
std::string unsupported_reason(const Graph& graph, NodeId node);

// Runs `graph` on `inputs` (one per graph input, in graph.inputs() order) and returns its
// outputs in graph.outputs() order. A missing input or one of the wrong dtype or shape, or
// an unsupported node, is an Error naming the input or node; nothing runs then.
std::vector<Tensor> run_graph(const Graph& graph, const std::vector<Tensor>& inputs, const RunOptions& options = {});

// The same, with inputs by name; an input name the graph does not have is an Error.
std::vector<Tensor> run_graph(const Graph& graph, const std::map<std::string, Tensor>& inputs,
                              const RunOptions& options = {});

// Seeded inputs for every graph input: floats N(0,1), integers in a small range, the same
// for the same seed on every machine.
// Inputs holding more than `max_bytes` together are an Error (naming the bytes), not an
// allocation.
std::vector<Tensor> random_inputs(const Graph& graph, uint64_t seed, int64_t max_bytes = kDefaultMaxMemoryBytes);

}  // namespace memledger
