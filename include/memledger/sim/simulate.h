// NPU mode (DESIGN.md P10): tensors live in external memory and every operator runs tile
// by tile in the device's local memory. For each operator the simulator chooses tile
// sizes that fit the local capacity, prices every DMA transfer (granularity, setup cycles,
// bandwidth) in a traffic ledger, and plans the tiles that are live at once with the same
// allocator and validator as the whole-tensor plan.
//
// The model and its limits:
//  - Tiles cut the operator's output (and the rows a reduction walks): spatial axes first
//    (N, then H, then W), output channels as blocks where the operator allows it. Of the
//    splits that fit, the one with the fewest DMA cycles wins.
//  - A tile's part of each tensor follows from the operator: the same box for elementwise
//    operands, a window with its halo for Conv and pools, the output channels' weight block
//    and groups for Conv, a column block of the weights for Gemm. A broadcast operand's box
//    is whole on its broadcast axes, so a compact parameter is a channel block.
//  - Loops run channel blocks outside spatial tiles or the other way round (the cheaper);
//    a tensor is loaded again only when its box changes from one tile to the next, so a
//    compact parameter is loaded once per channel block and reused across spatial tiles,
//    while an expanded one (stored at the activation's shape) is loaded with every tile.
//  - One transfer is one contiguous range of the external layout (dma.h), rounded up to
//    the DMA granularity. The ideal, every byte of every operand moved once in one
//    transfer per tensor, is the reference of every ratio.
//  - Double buffering doubles every local buffer that is loaded or stored more than once.
//  - A tile's workspace is the kernel contract's workspace scaled by the tile's share of the
//    output elements (a Conv's im2col by its share of the output positions); an output
//    tile takes its input tile's buffer where the contract allows in-place (the external
//    input stays intact, so no later reader can object).
//  - Operators without a precise model (Concat, Reshape, Softmax, ...) get the generic
//    rule: whole tensors if they fit, else every same-rank operand split like the output
//    and the rest whole. Reports say which operators used it.
//  - DMA and compute do not overlap in the cycle figure: it is the DMA's time alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/device/profile.h"
#include "memledger/ir/graph.h"
#include "memledger/plan/allocate/problem.h"
#include "memledger/sim/dma.h"

namespace memledger::sim {

// What a tensor is to the operator that moves it.
enum class TensorKind {
  kActivation,         // a computed value or a graph input
  kCompactParameter,   // a constant that broadcasts to the output (per channel: [1,C,1,1], Conv bias)
  kExpandedParameter,  // a constant stored at the output's full shape
  kWeights,            // Conv and Gemm/MatMul weights
  kOutput,
};
std::string_view to_string(TensorKind kind);

enum class ParameterReuse {
  kReuse,          // a parameter block stays in local memory while its box is unchanged
  kReloadPerTile,  // a naive schedule: every constant is loaded again with every tile
};

struct SimOptions {
  ParameterReuse parameters = ParameterReuse::kReuse;
  // Charge each tile the kernel contract's workspace (scaled to the tile). Off models an
  // engine that needs none (an NPU's Conv streams its windows, no im2col matrix).
  bool kernel_workspace = true;
};

// One tensor's part in one operator's traffic.
struct TensorTraffic {
  std::string name;
  TensorKind kind = TensorKind::kActivation;
  int64_t tensor_bytes = 0;  // its external layout's bytes
  int64_t tile_bytes = 0;    // its largest tile in local memory (one copy)
  int copies = 1;            // 2 when double-buffered
  int64_t moves = 0;         // how many times a tile of it is loaded (or stored)
  std::string reuse;         // when it moves: "once", "per channel block", "per spatial tile", "per tile"
  Traffic traffic;
  bool in_place = false;  // an output tile written over an input tile (owns no local bytes)
};

struct OperatorSim {
  std::string node;
  std::string op;
  std::string model;  // "elementwise", "conv", "pool", "global-pool", "gemm", "matmul", "generic"
  bool generic = false;
  std::string note;
  std::vector<std::string> grid_axes;  // "N", "C", "H", "W"
  std::vector<int64_t> grid_extents;   // per grid axis
  std::vector<int64_t> tile_extents;   // the largest tile per grid axis
  std::vector<int64_t> splits;         // tiles per grid axis
  int64_t tiles = 1;                   // product of splits
  std::string loop_order;              // "channel blocks outside" or "spatial tiles outside"
  std::vector<TensorTraffic> tensors;  // inputs, then outputs
  int64_t workspace_bytes = 0;         // per tile
  Traffic load, store, ideal;          // external→local, local→external, the reference
  allocate::Problem local;             // the tile buffers live at once
  allocate::Solution local_plan;       // placed by the allocator and checked by the validator
  int64_t local_peak_bytes = 0;        // local_plan.arena_bytes
  bool fits = true;                    // local_peak_bytes within the local capacity

  Traffic total() const { return load + store; }
};

struct SimReport {
  std::string graph;
  DeviceProfile device;
  SimOptions options;
  std::vector<OperatorSim> operators;  // in execution order
  Traffic load, store, ideal;
  // Parameter loads, by kind (the seed's compact versus expanded figures).
  Traffic compact_parameters, expanded_parameters, weights;
  int64_t compact_parameter_ideal_bytes = 0, expanded_parameter_ideal_bytes = 0, weight_ideal_bytes = 0;
  int64_t local_peak_bytes = 0;  // the largest operator's tiles
  std::string local_peak_node;
  int64_t external_bytes_needed = 0;  // the whole-tensor plan's arena (greedy), in external memory
  bool fits_local = true;
  bool fits_external = true;
  int generic_operators = 0;

  Traffic total() const { return load + store; }
  double bytes_ratio() const;   // total().bytes / ideal.bytes (1 when the ideal is 0)
  double cycles_ratio() const;  // total().cycles / ideal.cycles
  bool fits() const { return fits_local && fits_external; }
};

// Simulates `graph` (which must verify) on `profile`. An Error when the profile has no
// external memory or no local capacity (dma.external_bytes and capacity_bytes must be > 0).
SimReport simulate(const Graph& graph, const DeviceProfile& profile, const SimOptions& options = {});

std::string_view to_string(ParameterReuse reuse);

}  // namespace memledger::sim
