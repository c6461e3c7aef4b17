// Receptive-field rules of patch-based execution (fit/patch.h), read from the op table's
// records (ir/op_table: PatchRule, window geometry, channel parameters, MACs): whether a
// node can run on a box of its output, the box of each input that box needs (the window's
// halo, clipped to the image), and the pads of a clone that computes exactly that box.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "memledger/ir/graph.h"

namespace memledger {

// A half-open box [h0, h1) × [w0, w1) of a 4-D NCHW value's H and W axes.
struct Box {
  int64_t h0 = 0, h1 = 0, w0 = 0, w1 = 0;

  int64_t height() const { return h1 - h0; }
  int64_t width() const { return w1 - w0; }
  bool empty() const { return h1 <= h0 || w1 <= w0; }
  bool contains(const Box& b) const { return h0 <= b.h0 && b.h1 <= h1 && w0 <= b.w0 && b.w1 <= w1; }
  bool operator==(const Box&) const = default;
};

// The smallest box holding both.
Box hull(const Box& a, const Box& b);
std::string box_to_string(const Box& box);  // "[0,57)x[0,57)"

// Why `node` cannot run on a box of its output, or empty. `is_data[v]` says whether value v
// depends on a graph input (the patched data path); the other inputs (weights, Clip's
// bounds, computed constants) are read whole and must broadcast over H and W.
std::string patch_rule_problem(const Graph& graph, const Node& node, const std::vector<char>& is_data);

// A pool over all of H and W that patch-based execution computes in row strips before the
// patches of the stage that reads it (a squeeze-and-excitation block's pool): a node whose
// record has PatchRule::kGlobalPool over a 4-D float32 input, or memledger.AccumulatePool,
// such a pool already computed strip by strip.
bool is_strip_pool(const Graph& graph, const Node& node);

// A Slice of H and W only (constant starts, step 1), as patching writes them: a patch of
// its output is a shifted box of its input, so a clone needs no node of its own.
bool is_spatial_slice(const Graph& graph, const Node& node);

// The box of data input `input` that computing `out` of the node's output needs. Windows
// (Conv, pools) take kernel, stride, dilation and pads into account and clip to the input;
// every other rule needs the same box.
Box needed_input_box(const Graph& graph, const Node& node, size_t input, const Box& out);

// The attributes of a clone of `node` that computes exactly `out` from input 0's
// needed_input_box: pads where the box meets the image border are the original's part
// that falls outside the image, none at interior borders.
Attributes patched_attributes(const Graph& graph, const Node& node, const Box& out);

// Multiply-accumulates of one node, from its op table record (Conv, ConvTranspose, Gemm,
// MatMul; 0 for the others).
int64_t node_macs(const Graph& graph, const Node& node);

}  // namespace memledger
