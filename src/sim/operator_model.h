// How one operator runs tile by tile: the grid of tiles (the output's axes, plus any axis
// a reduction walks in pieces), and for each tensor it reads or writes, which part of the
// tensor one tile touches. The simulator (simulate.cpp) chooses the splits and prices them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memledger/ir/graph.h"
#include "memledger/sim/simulate.h"

namespace memledger::sim {

enum class AxisGroup { kSpatial, kChannel };

struct GridAxis {
  std::string name;  // "N", "C", "H", "W", or "axis 2"
  int64_t extent = 1;
  AxisGroup group = AxisGroup::kSpatial;
  // Split pieces accumulate into one output block kept in local memory (a global pool
  // walking its input rows): the axis must be iterated inside every other split axis.
  bool reduction = false;
};

// Which part of one tensor axis a tile touches, given the tile's range on a grid axis.
struct AxisMap {
  enum class Kind {
    kFull,    // the whole axis, whatever the tile (also a broadcast axis of extent 1)
    kSame,    // the tile's range on `grid`
    kWindow,  // the input rows a window (Conv, pool) reads for the tile's output rows: the halo
    kGroups,  // the input channels of the groups the tile's output channels belong to
    kScaled,  // the proportional range (generic operators)
  };
  Kind kind = Kind::kFull;
  int grid = -1;
  int64_t kernel = 1, stride = 1, pad_begin = 0, dilation = 1;  // kWindow
  int64_t out_per_group = 1, in_per_group = 1;                  // kGroups
};

struct Range {
  int64_t begin = 0, end = 0;
  int64_t extent() const { return end - begin; }
};

// The tensor axis range one tile touches; `axis_extent` is the tensor's extent on this axis.
Range map_range(const AxisMap& map, int64_t axis_extent, Range tile, int64_t grid_extent);

struct TensorUse {
  ValueId value;
  TensorKind kind = TensorKind::kActivation;
  std::vector<AxisMap> axes;  // one per tensor axis
  bool output() const { return kind == TensorKind::kOutput; }
};

struct OperatorModel {
  std::string model;  // "elementwise", "conv", "pool", "global-pool", "gemm", "matmul", "generic"
  bool generic = false;
  std::string note;  // why the generic rule applies, in words
  std::vector<GridAxis> grid;
  std::vector<int> spatial_ladder;  // spatial grid axes in the order they are split (N, H, W)
  std::optional<int> channel;       // the grid axis split into channel blocks, when the operator allows it
  std::vector<TensorUse> tensors;   // inputs (each distinct value once), then outputs
};

// The tile model of `node`; never fails (unknown operators get the generic model).
OperatorModel model_operator(const Graph& graph, const Node& node);

}  // namespace memledger::sim
