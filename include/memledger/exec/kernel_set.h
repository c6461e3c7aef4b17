// Which kernels run a node. Two sets: `reference` (exec's own strided kernels, the
// numbers every proof rests on) and `fast` (oneDNN for Conv, ConvTranspose, MatMul, Gemm,
// pooling, normalisation and activations, the reference kernel for every other node).
// A kernel set comes with its contracts: the fast set's workspace is exactly the
// scratchpad and reorder buffers its oneDNN primitives report for the node's shapes and
// thread count, so a plan made for one set is a plan for that set only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/ir/op_table.h"

namespace memledger {

enum class KernelSet { kFast, kReference };

std::string_view kernel_set_name(KernelSet set);
// "fast" or "reference"; nullopt otherwise.
std::optional<KernelSet> parse_kernel_set(std::string_view text);

// What a run may hold at once unless told otherwise (`run --max-memory`).
inline constexpr int64_t kDefaultMaxMemoryBytes = int64_t{2} << 30;

struct ExecOptions {
  KernelSet kernels = KernelSet::kFast;
  int threads = 1;  // the fast kernels' threads (the reference kernels have none)
  // Fast set: constant weights oneDNN wants in a blocked format are reordered once, when
  // the executor is made, and held by it (Executor::prepacked_bytes(), outside the plan).
  // Off: they are reordered on every run into the node's declared workspace.
  bool prepack_weights = true;
  // Weights viewing a mapped model file hand their pages back to the kernel after their
  // last reader in each run (Tensor::release_pages), so a single run holds each one only
  // while nodes read it (`memledger run` without --repeat). The next run reads them again
  // from the page cache: minor faults, which repeated runs are better without.
  bool release_weights_after_use = false;
  // Activation and workspace bytes live at once during a run; a buffer that would pass it
  // is an Error naming the node, the value and the bytes, raised before the allocation.
  int64_t max_memory_bytes = kDefaultMaxMemoryBytes;
  // Fast set: nodes (by name) that run on the reference kernels all the same, with the op
  // table's contracts (in place where it allows, its workspaces): what a fit within a
  // capacity asks of the nodes whose fast contracts would pass it (verify/fit_arena.h). A
  // name that is no node's is an Error when the Executor is made.
  std::vector<std::string> reference_nodes;
};

// Where a planner takes a node's contract from (PlanOptions::contracts).
using ContractSource = std::function<KernelContract(const Graph&, NodeId, const DeviceProfile&)>;

// The contracts of the kernels `exec` runs (oneDNN sizes its scratchpad for the threads it
// may use; without prepacking the weights' reorder buffers are workspace too). A node the
// fast set does not take has the op table's contract (the reference kernels'); an
// operator the table does not know is an Error naming the node.
ContractSource contract_source(const ExecOptions& exec);

}  // namespace memledger
