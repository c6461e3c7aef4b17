// The geometry of a sliding-window operator (Conv, pooling) over 1 to 3 spatial axes, read
// from a node's attributes and shapes once, so that the kernel, the op table's workspace
// rule, the simulator's halo and patch-based execution all see the same pads and strides.
#pragma once

#include <cstdint>
#include <vector>

#include "memledger/ir/graph.h"

namespace memledger {

constexpr int kMaxSpatial = 3;

// A window padded to three spatial axes (1-D and 2-D have unit leading axes).
struct Window {
  int spatial = 0;  // the node's own number of spatial axes
  int64_t in[kMaxSpatial], out[kMaxSpatial], k[kMaxSpatial], stride[kMaxSpatial], dilation[kMaxSpatial];
  int64_t pad_begin[kMaxSpatial], pad_end[kMaxSpatial];

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
  bool is_pointwise() const;
};

// The window of `node` with input shape x, output shape y and kernel extents `kernel`
// (N, C, spatial...); an Error naming the node for bad ranks, non-positive strides,
// dilations or extents, a wrong attribute length or an unknown auto_pad.
Window window(const Node& node, const Shape& x, const Shape& y, std::vector<int64_t> kernel);

// The range [lo, hi) of output positions o along one axis for which input
// o·s − p + offset lies inside [0, n).
void valid_range(int64_t n, int64_t out, int64_t s, int64_t p, int64_t offset, int64_t& lo, int64_t& hi);

// A Conv's shape facts: window, batch, input channels, maps, group, channels and maps per group.
struct ConvShape {
  Window w;
  int64_t batch, channels, maps, group, cg, mg;
  // One input channel per group: computed directly, tap by tap, without an im2col.
  bool direct() const { return cg == 1 && group > 1; }
};
ConvShape conv_shape(const Graph& graph, const Node& node);

// The reference Conv builds its im2col a block of output rows at a time: the block's budget
// is small enough not to set a model's peak (a stem Conv's input, output and workspace are
// often the peak step), while every GEMM gets at least kIm2colMinColumns columns so its
// register tiles stay full.
constexpr int64_t kIm2colBlockBytes = int64_t{128} << 10;
constexpr int64_t kIm2colMinColumns = 64;
// Output rows ((od, oh) pairs, each of out[2] positions) per im2col block of k rows: at least one.
int64_t im2col_block_rows(const Window& w, int64_t k);

}  // namespace memledger
