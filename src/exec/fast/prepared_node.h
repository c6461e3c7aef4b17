// The fast kernel set (oneDNN 2.6): a node's primitives are created once, when an Executor
// is made, never inside a timed run. Every byte a primitive needs beyond its inputs and
// outputs — oneDNN's scratchpad (user-managed) and the buffers of any reorder into the
// blocked formats oneDNN prefers — lies in the node's declared workspace, at offsets fixed
// at preparation, so the kernel contract states exactly what the run touches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/kernel.h"

namespace memledger::exec::fast {

class PreparedNode {
 public:
  virtual ~PreparedNode() = default;
  // The workspace the run uses: scratchpads and reorder buffers, 64-byte aligned regions.
  virtual int64_t workspace_bytes() const = 0;
  // Runs on the buffers of `ctx` (its workspace exactly workspace_bytes()). Allocates
  // nothing of its own (oneDNN's execute keeps a few bytes of argument bookkeeping).
  virtual void run(KernelContext& ctx) = 0;
  // The oneDNN implementations chosen, for reports ("jit:avx512_core, reorder").
  virtual std::string describe() const = 0;
  // Bytes of constants (weights) reordered once, at preparation, into the primitive's
  // format and held by the node outside any plan (0 unless prepacking).
  virtual int64_t prepacked_bytes() const { return 0; }
};

struct PrepareOptions {
  int threads = 1;
  // Constant weights in a blocked format are reordered once here and held (prepacked_bytes)
  // instead of being reordered into the workspace on every run.
  bool prepack_weights = true;
  // Only the contract is wanted: the primitives are made, no prepacking reorder runs.
  bool contract_only = false;
};

// Whether the fast set has a kernel for the operator at all.
bool has_fast_kernel(const Node& node);

// The fast kernel of `node` prepared for options.threads threads, or null with `why` saying why
// the fast set does not run this node (then the reference kernel does).
std::unique_ptr<PreparedNode> prepare(const Graph& graph, const Node& node, const PrepareOptions& options,
                                      std::string& why);

// How deep this thread is inside a oneDNN call of a run (execute, set_data_handle) right now (0 outside): a test that
// counts heap allocations tells oneDNN's own argument bookkeeping from memledger's.
int onednn_call_depth();

// Sets the threads oneDNN's kernels use on this thread (OpenMP), at least 1.
void set_threads(int threads);

}  // namespace memledger::exec::fast
