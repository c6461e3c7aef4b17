// Patch-based execution (issue 13, item 4; MCUNetV2's idea) as a graph rewrite the rest of
// the system already understands: the stage of the network that a chosen split value
// depends on runs patch by patch over a rows×cols grid of the split's H×W. Each patch
// crops what it needs of the stage input (Slice), runs clones of the stage's nodes on
// boxes widened by the receptive-field halo (pads rewritten: none at interior borders, the
// original's at the image's), and memledger.WritePatch copies its result into the split
// value's full buffer, in place over the previous patches' (see ir/write_patch.h). The
// liveness, ledger, allocator and `run --arena` then size and prove the per-patch buffers
// like any other; results are bit-identical to the layer-by-layer run.
//
// A squeeze-and-excitation block may lie inside the stage: its global pool needs the whole
// of its input, so the stage first runs a pool pass — row strips of the stage up to the
// pool's input, whose sums memledger.AccumulatePool adds in the reference pool's order
// (ir/accumulate_pool.h) — then the gate is computed once from the pooled value, and the
// patches read it whole. A stage with k pools runs k passes before its patches, each
// recomputing the stage up to its pool (the extra MACs count them).
//
// Limits: the stage's values are 4-D NCHW activations (batch and channels are never split);
// operators with a patch rule are Conv (grouped and depthwise too), MaxPool, AveragePool,
// BatchNormalization, the memledger Affine, unary activations (Relu, Clip, ...),
// elementwise binary operators whose other operand is a constant or a pooled gate
// broadcast over H and W or a stage value of the same shape (a residual Add), Concat over
// channels, Slice of H and W with constant starts (so a patched graph's own patches can
// be patched again), and GlobalAveragePool over a float32 activation (by its pass).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memledger/ir/graph.h"

namespace memledger {

struct PatchSpec {
  ValueId split;  // the stage is everything this value depends on, back to graph inputs and constants
  int rows = 4;
  int cols = 4;
  // A later stage: the walk back from the split stops at this value (a 4-D activation
  // computed in full before the stage, e.g. an earlier stage's split), which the patches
  // crop like a graph input. Invalid: back to the graph inputs.
  ValueId after;
  // Row strips of each pool pass; 0: rows × cols (a strip holds about a patch's elements),
  // at most the pooled input's H.
  int pool_rows = 0;
};

struct PatchedGraph {
  Graph graph;
  int64_t original_macs = 0;
  int64_t patched_macs = 0;  // extra = patched − original (recomputed halos)
  // Per node of graph.order(): the patch (r·cols + c) it belongs to, −1 outside the stage.
  std::vector<int> patch_of_node;
  int rows = 0, cols = 0;
  std::string split_name;

  // Patches of patches only (apply_nested_patches): per node of graph.order(), its patch
  // of the inner grid, −1 outside one; the inner grid and split.
  std::vector<int> inner_patch_of_node;
  int inner_rows = 0, inner_cols = 0;
  std::string inner_split_name;

  // Pools inside the stage: per node of graph.order(), the pool pass it belongs to and its
  // row strip of that pass (−1 outside one; patch_of_node is −1 there), and the pooled
  // values' names, one per pass.
  std::vector<int> pool_pass_of_node, pool_strip_of_node;
  std::vector<std::string> pool_names;

  int64_t extra_macs() const { return patched_macs - original_macs; }
  // Whether the node at position `i` of graph.order() runs inside the stage (a patch or a
  // pool pass).
  bool in_stage(size_t i) const { return patch_of_node.at(i) >= 0 || pool_pass_of_node.at(i) >= 0; }
};

// Values on the trunk where a stage ends cleanly: a single value (this one) connects the
// stage to the rest of the graph, it is a 4-D activation produced by a node, and every
// stage node has a patch rule. In execution order. With `after`, for a later stage
// starting there: the values after it whose stage, walked back to `after` (not past it),
// ends cleanly. Without `through_pools`, only stages that hold no global pool.
std::vector<ValueId> patch_split_candidates(const Graph& graph, ValueId after = {}, bool through_pools = true);

// The patched graph. An Error (user error, naming the value or node) when the grid cannot
// apply: the split is not a candidate, the grid is larger than the split's H or W, or an
// operator in the stage has no patch rule.
PatchedGraph apply_patches(const Graph& graph, const PatchSpec& spec);

// Patches of patches: the stage of `outer.split` runs patch by patch, and inside each of
// its patches the part of the stage up to `inner.split` (a value inside the outer stage)
// runs as its own inner grid, so the deep outer stage keeps small boxes at the high
// resolutions without the halo of one fine grid over the whole stage. patch_of_node gives
// each node's outer patch, inner_patch_of_node its inner one. The same Errors as
// apply_patches, for either grid (an inner grid larger than an outer patch's box of the
// inner split is refused, naming it).
PatchedGraph apply_nested_patches(const Graph& graph, const PatchSpec& outer, const PatchSpec& inner);

// Multiply-accumulates of the graph's Conv, ConvTranspose, Gemm and MatMul nodes.
int64_t graph_macs(const Graph& graph);

}  // namespace memledger
