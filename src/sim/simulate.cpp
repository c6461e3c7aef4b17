#include "memledger/sim/simulate.h"

#include <algorithm>
#include <limits>
#include <map>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/device/tensor_layout.h"
#include "memledger/ir/op_table.h"
#include "memledger/plan/allocate/planner.h"
#include "memledger/plan/allocate/validate.h"
#include "memledger/plan/memory_plan.h"
#include "operator_model.h"

namespace memledger::sim {
namespace {

bool is_parameter(TensorKind kind) {
  return kind == TensorKind::kCompactParameter || kind == TensorKind::kExpandedParameter ||
         kind == TensorKind::kWeights;
}

// A tensor of the operator with its external layout.
struct Operand {
  const Value* value = nullptr;
  const TensorUse* use = nullptr;
  Layout layout;
};

// The tiles of one grid axis for a tile size, grouped into classes whose tiles touch
// boxes of the same extents in every operand (first and last tiles differ by their halo
// and remainder), so traffic is a sum over a few classes instead of every tile.
struct AxisTiles {
  int64_t count = 0;
  struct Class {
    Range representative;
    int64_t count = 0;
  };
  std::vector<Class> classes;
  int64_t largest = 0;
};

// One choice of tile sizes and loop order, priced.
struct Evaluation {
  std::vector<int64_t> tile;  // per grid axis
  std::vector<AxisTiles> axes;
  std::vector<int> nest;  // grid axes outer → inner
  std::vector<int64_t> tile_bytes, moves;
  std::vector<int> copies, depth;  // depth: nest position of the innermost axis the operand's box follows (−1: none)
  std::vector<bool> forced;        // reloaded with every tile by the naive schedule
  int in_place = -1;               // operand index of the output written over an input
  int64_t workspace = 0;
  int64_t footprint = 0;
  double cycles = std::numeric_limits<double>::infinity();
  int64_t tiles = 1;
};

class OperatorSimulator {
 public:
  OperatorSimulator(const Graph& g, NodeId id, const DeviceProfile& profile, const SimOptions& options)
      : g_(g), node_(g.node(id)), profile_(profile), options_(options), model_(model_operator(g, node_)) {
    for (const TensorUse& use : model_.tensors) {
      const Value& v = g.value(use.value);
      operands_.push_back({&v, &use, tensor_layout(profile, v.shape, v.dtype, v.roles)});
    }
    try {
      contract_ = op_contract(g, id, profile);
    } catch (const Error&) {
      contract_note_ = "operator not in the op table: no workspace and no in-place assumed";
    }
  }

  OperatorSim run() {
    std::optional<Evaluation> best;
    std::optional<Evaluation> smallest;
    for (int64_t channel_tile : channel_tiles()) {
      for (std::vector<int64_t> tile : spatial_ladder()) {
        if (model_.channel) tile[*model_.channel] = channel_tile;
        bool any_fits = false;
        for (const std::vector<int>& nest : nests(tile)) {
          Evaluation e = size_up(tile, nest);
          if (e.footprint > profile_.capacity_bytes) {
            if (!smallest || e.footprint < smallest->footprint) smallest = e;
            continue;
          }
          any_fits = true;
          price(e);
          if (!best || e.cycles < best->cycles || (e.cycles == best->cycles && e.tiles < best->tiles))
            best = std::move(e);
        }
        if (any_fits) break;  // smaller spatial tiles only add transfers and halo
      }
    }
    const bool fits = best.has_value();
    if (!fits) {
      best = std::move(smallest);
      ML_CHECK(best.has_value(), "no tiling evaluated for {}", node_.label());
      price(*best);
    }
    return report(*best, fits);
  }

 private:
  int64_t grid_extent(int a) const { return model_.grid[static_cast<size_t>(a)].extent; }

  // Channel block sizes, whole first: ceil(C / n) for n = 1, 2, ... (distinct values).
  std::vector<int64_t> channel_tiles() const {
    if (!model_.channel) return {0};
    return distinct_tiles(grid_extent(*model_.channel), true);
  }

  // Up to this extent every distinct ceil(extent / n) is a candidate; beyond it (a Relu over
  // [2^40] enumerated 2^40 counts) the first kExactCounts of them, then sizes shrinking by
  // 1/16 each down to 1: a few hundred candidates for any extent.
  static constexpr int64_t kExactLadderExtent = int64_t{1} << 16;
  static constexpr int64_t kExactCounts = 256;

  static std::vector<int64_t> distinct_tiles(int64_t extent, bool include_whole) {
    std::vector<int64_t> tiles;
    if (extent <= 1) return {std::max<int64_t>(extent, 1)};
    const int64_t exact_counts = extent <= kExactLadderExtent ? extent : kExactCounts;
    for (int64_t n = include_whole ? 1 : 2; n <= exact_counts; ++n) {
      const int64_t t = ceil_div(extent, n);
      if (tiles.empty() || tiles.back() != t) tiles.push_back(t);
    }
    if (exact_counts < extent) {
      for (int64_t t = tiles.empty() ? extent : tiles.back(); t > 1;) {
        t = std::min(t - 1, t - t / 16);
        tiles.push_back(t);
      }
    }
    if (tiles.empty()) tiles.push_back(extent);
    return tiles;
  }

  // Spatial tile sizes from whole to one element: the first ladder axis (N) shrinks to 1,
  // then the next (H) with N at 1, then W with N and H at 1.
  std::vector<std::vector<int64_t>> spatial_ladder() const {
    std::vector<int64_t> tile(model_.grid.size());
    for (size_t a = 0; a < tile.size(); ++a) tile[a] = std::max<int64_t>(model_.grid[a].extent, 1);
    std::vector<std::vector<int64_t>> ladder{tile};
    for (int a : model_.spatial_ladder) {
      if (grid_extent(a) <= 1) continue;
      for (int64_t t : distinct_tiles(grid_extent(a), false)) {
        tile[static_cast<size_t>(a)] = t;
        ladder.push_back(tile);
      }
    }
    return ladder;
  }

  // Loop orders: channel blocks outside spatial tiles, and the other way round. A split
  // reduction axis must sit inside every split axis that is not a reduction.
  std::vector<std::vector<int>> nests(const std::vector<int64_t>& tile) const {
    auto split = [&](int axis) { return tile[static_cast<size_t>(axis)] < grid_extent(axis); };
    std::vector<int> channel_outside, spatial_outside = model_.spatial_ladder;
    if (model_.channel) channel_outside.push_back(*model_.channel);
    channel_outside.insert(channel_outside.end(), model_.spatial_ladder.begin(), model_.spatial_ladder.end());
    if (model_.channel) spatial_outside.push_back(*model_.channel);
    const bool channel_split = model_.channel && split(*model_.channel);
    const bool spatial_split = std::any_of(model_.spatial_ladder.begin(), model_.spatial_ladder.end(), split);
    std::vector<std::vector<int>> result;
    for (const auto& nest : {channel_outside, spatial_outside}) {
      bool valid = true, reduction_seen = false;
      for (int axis : nest) {
        if (!split(axis)) continue;
        if (model_.grid[static_cast<size_t>(axis)].reduction)
          reduction_seen = true;
        else if (reduction_seen)
          valid = false;
      }
      if (valid) result.push_back(nest);
      if (!(channel_split && spatial_split)) break;  // with one kind of split, both orders are the same
    }
    return result;
  }

  // The tiles of axis `a` in classes of equal boxes. Only tiles near either border can be
  // clipped differently (halo, padding), so with many tiles the first and last kBorderTiles
  // are classified one by one and the interior, when its ends agree, counts as one class:
  // the cost follows the classes, not the number of tiles (2^40 one-element tiles).
  static constexpr int64_t kBorderTiles = 64;

  AxisTiles tiles_of(int a, int64_t tile) const {
    AxisTiles result;
    const int64_t extent = grid_extent(a);
    const int64_t count = ceil_div(std::max<int64_t>(extent, 1), tile);
    std::map<std::vector<int64_t>, size_t> index;
    const auto key_of = [&](const Range& r) {
      std::vector<int64_t> key{r.extent()};
      for (const Operand& op : operands_)
        for (size_t i = 0; i < op.use->axes.size(); ++i)
          if (op.use->axes[i].grid == a)
            key.push_back(map_range(op.use->axes[i], op.value->shape[i], r, extent).extent());
      return key;
    };
    const auto range_of = [&](int64_t k) { return Range{k * tile, std::min(extent, k * tile + tile)}; };
    const auto add = [&](int64_t k, int64_t times) {
      const Range r = range_of(k);
      result.count += times;
      result.largest = std::max(result.largest, r.extent());
      auto [it, inserted] = index.emplace(key_of(r), result.classes.size());
      if (inserted) result.classes.push_back({r, 0});
      result.classes[it->second].count += times;
    };
    const int64_t first_interior = kBorderTiles, last_interior = count - 1 - kBorderTiles;
    const bool interior_uniform = last_interior > first_interior &&
                                  key_of(range_of(first_interior)) == key_of(range_of(first_interior - 1)) &&
                                  key_of(range_of(last_interior)) == key_of(range_of(last_interior + 1)) &&
                                  key_of(range_of(first_interior)) == key_of(range_of(last_interior));
    if (!interior_uniform) {
      for (int64_t k = 0; k < count; ++k) add(k, 1);
      return result;
    }
    for (int64_t k = 0; k < first_interior; ++k) add(k, 1);
    add(first_interior, last_interior - first_interior + 1);
    for (int64_t k = last_interior + 1; k < count; ++k) add(k, 1);
    return result;
  }

  // The box extents of operand `t` for one class per grid axis.
  Shape box(size_t t, const std::vector<Range>& ranges) const {
    const Operand& op = operands_[t];
    Shape extents(op.value->shape.size());
    for (size_t i = 0; i < extents.size(); ++i) {
      const AxisMap& m = op.use->axes[i];
      const Range tile = m.grid >= 0 ? ranges[static_cast<size_t>(m.grid)] : Range{};
      extents[i] = map_range(m, op.value->shape[i], tile, m.grid >= 0 ? grid_extent(m.grid) : 0).extent();
    }
    return extents;
  }

  // Tile sizes, local buffers and the footprint of one choice (no traffic yet).
  Evaluation size_up(const std::vector<int64_t>& tile, const std::vector<int>& nest) const {
    Evaluation e;
    e.tile = tile;
    e.nest = nest;
    for (size_t a = 0; a < tile.size(); ++a) {
      e.axes.push_back(tiles_of(static_cast<int>(a), std::max<int64_t>(tile[a], 1)));
      e.tiles *= e.axes.back().count;
    }
    std::vector<int> position(tile.size(), -1);
    for (size_t p = 0; p < nest.size(); ++p) position[static_cast<size_t>(nest[p])] = static_cast<int>(p);
    const int last = static_cast<int>(nest.size()) - 1;
    for (size_t t = 0; t < operands_.size(); ++t) {
      const Operand& op = operands_[t];
      // The largest box: the largest class on every axis (a box's bytes grow with each extent).
      Shape largest(op.value->shape.size());
      int depth = -1;
      for (size_t i = 0; i < largest.size(); ++i) {
        const AxisMap& m = op.use->axes[i];
        if (m.grid < 0 || m.kind == AxisMap::Kind::kFull) {
          largest[i] = op.value->shape[i];
          continue;
        }
        const AxisTiles& at = e.axes[static_cast<size_t>(m.grid)];
        for (const auto& c : at.classes)
          largest[i] =
              std::max(largest[i], map_range(m, op.value->shape[i], c.representative, grid_extent(m.grid)).extent());
        if (at.count > 1) depth = std::max(depth, position[static_cast<size_t>(m.grid)]);
      }
      const bool forced = options_.parameters == ParameterReuse::kReloadPerTile && is_parameter(op.use->kind);
      if (forced) depth = last;
      int64_t moves = 1;
      for (int p = 0; p <= depth; ++p) moves *= e.axes[static_cast<size_t>(nest[static_cast<size_t>(p)])].count;
      const int64_t bytes = tensor_layout(profile_, largest, op.value->dtype, op.value->roles).bytes();
      e.tile_bytes.push_back(bytes);
      e.moves.push_back(moves);
      e.depth.push_back(depth);
      e.forced.push_back(forced);
      e.copies.push_back(moves > 1 && profile_.dma.double_buffering ? 2 : 1);
    }
    // In-place: the output tile takes an input tile's buffer where the kernel allows it.
    if (node_.outputs.size() == 1) {
      const size_t out = operands_.size() - 1;
      for (int input : contract_.overwritable_inputs) {
        if (static_cast<size_t>(input) >= node_.inputs.size()) continue;
        for (size_t t = 0; t + 1 < operands_.size(); ++t) {
          if (operands_[t].use->value != node_.inputs[static_cast<size_t>(input)] ||
              operands_[t].use->kind != TensorKind::kActivation || e.tile_bytes[t] < e.tile_bytes[out] ||
              e.copies[t] < e.copies[out] || e.in_place >= 0)
            continue;
          e.in_place = static_cast<int>(t);
        }
      }
    }
    if (options_.kernel_workspace && contract_.workspace_bytes > 0) {
      // The workspace follows the output tile: a Conv's im2col its spatial positions only
      // (every channel block reuses it), any other kernel's the whole tile.
      int64_t part = 1, whole = 1;
      for (size_t a = 0; a < tile.size(); ++a) {
        if (model_.model == "conv" && model_.channel && static_cast<int>(a) == *model_.channel) continue;
        part *= e.axes[a].largest;
        whole *= std::max<int64_t>(grid_extent(static_cast<int>(a)), 1);
      }
      e.workspace = ceil_div(checked_mul(contract_.workspace_bytes, part, "workspace"), whole);
    }
    const int64_t alignment = profile_.alignment_bytes;
    for (size_t t = 0; t < operands_.size(); ++t) {
      if (operands_[t].use->output() && e.in_place >= 0) continue;
      e.footprint += align_up(e.tile_bytes[t], alignment, "tile") * e.copies[t];
    }
    e.footprint += align_up(e.workspace, alignment, "workspace");
    return e;
  }

  // The traffic of operand `t`: a sum over the classes of the nest's axes down to the
  // innermost one its box follows; the axes inside it don't move it again.
  Traffic operand_traffic(const Evaluation& e, size_t t) const {
    const Operand& op = operands_[t];
    std::vector<Range> ranges(e.axes.size());
    for (size_t a = 0; a < e.axes.size(); ++a) ranges[a] = e.axes[a].classes.front().representative;
    Traffic total;
    const int depth = e.depth[t];
    auto walk = [&](auto&& self, int p, int64_t multiplicity) -> void {
      if (p > depth) {
        total += dma_traffic(profile_.dma, box_ranges(op.layout, box(t, ranges)), multiplicity);
        return;
      }
      const size_t axis = static_cast<size_t>(e.nest[static_cast<size_t>(p)]);
      for (const auto& c : e.axes[axis].classes) {
        ranges[axis] = c.representative;
        self(self, p + 1, multiplicity * c.count);
      }
      ranges[axis] = e.axes[axis].classes.front().representative;
    };
    walk(walk, 0, 1);
    return total;
  }

  void price(Evaluation& e) const {
    e.cycles = 0;
    for (size_t t = 0; t < operands_.size(); ++t) e.cycles += operand_traffic(e, t).cycles;
  }

  std::string reuse_label(const Evaluation& e, size_t t) const {
    if (e.forced[t]) return "per tile";
    if (e.moves[t] == 1) return "once";
    if (e.moves[t] == e.tiles) return "per tile";
    bool channel = false, spatial = false;
    for (int p = 0; p <= e.depth[t]; ++p) {
      const int axis = e.nest[static_cast<size_t>(p)];
      if (e.axes[static_cast<size_t>(axis)].count <= 1) continue;
      (model_.grid[static_cast<size_t>(axis)].group == AxisGroup::kChannel ? channel : spatial) = true;
    }
    if (channel && !spatial) return "per channel block";
    if (spatial && !channel) return "per spatial tile";
    return "per tile";
  }

  OperatorSim report(const Evaluation& e, bool fits) const {
    OperatorSim s;
    s.node = node_.name.empty() ? node_.label() : node_.name;
    s.op = node_.op;
    s.model = model_.model;
    s.generic = model_.generic;
    s.note = model_.note;
    if (!contract_note_.empty()) s.note += (s.note.empty() ? "" : "; ") + contract_note_;
    for (size_t a = 0; a < model_.grid.size(); ++a) {
      s.grid_axes.push_back(model_.grid[a].name);
      s.grid_extents.push_back(model_.grid[a].extent);
      s.tile_extents.push_back(e.axes[a].largest);
      s.splits.push_back(e.axes[a].count);
    }
    s.tiles = e.tiles;
    const bool channel_split = model_.channel && e.axes[static_cast<size_t>(*model_.channel)].count > 1;
    bool spatial_split = false;
    for (int a : model_.spatial_ladder) spatial_split |= e.axes[static_cast<size_t>(a)].count > 1;
    if (channel_split && spatial_split)
      s.loop_order = model_.grid[static_cast<size_t>(e.nest.front())].group == AxisGroup::kChannel
                         ? "channel blocks outside"
                         : "spatial tiles outside";
    else
      s.loop_order = channel_split ? "channel blocks" : spatial_split ? "spatial tiles" : "whole";
    int64_t ideal_bytes = 0, ideal_transfers = 0;
    for (size_t t = 0; t < operands_.size(); ++t) {
      const Operand& op = operands_[t];
      TensorTraffic tt;
      tt.name = op.value->name;
      tt.kind = op.use->kind;
      tt.tensor_bytes = op.layout.bytes();
      tt.tile_bytes = e.tile_bytes[t];
      tt.copies = e.copies[t];
      tt.moves = e.moves[t];
      tt.reuse = reuse_label(e, t);
      tt.traffic = operand_traffic(e, t);
      tt.in_place = op.use->output() && e.in_place >= 0;
      (op.use->output() ? s.store : s.load) += tt.traffic;
      ideal_bytes += tt.tensor_bytes;
      ideal_transfers += tt.tensor_bytes > 0 ? 1 : 0;
      s.tensors.push_back(std::move(tt));
    }
    s.ideal = ideal_traffic(profile_.dma, ideal_bytes, ideal_transfers);
    s.workspace_bytes = e.workspace;
    // The tiles live at once, placed by the same allocator as the whole-tensor plan.
    for (size_t t = 0; t < operands_.size(); ++t) {
      if (s.tensors[t].in_place) continue;
      for (int c = 0; c < e.copies[t]; ++c)
        s.local.buffers.push_back({.id = s.tensors[t].name + (c ? " (second copy)" : ""),
                                   .size = e.tile_bytes[t],
                                   .alignment = profile_.alignment_bytes,
                                   .lower = 0,
                                   .upper = 1});
    }
    if (e.workspace > 0)
      s.local.buffers.push_back(
          {.id = "workspace", .size = e.workspace, .alignment = profile_.alignment_bytes, .lower = 0, .upper = 1});
    allocate::check_problem(s.local);
    s.local_plan = allocate::plan(s.local, allocate::Algorithm::kGreedy);
    const auto violation = allocate::find_violation(s.local, s.local_plan);
    ML_CHECK(!violation, "local plan of {}: {}", node_.label(), violation.value_or(""));
    s.local_peak_bytes = s.local_plan.arena_bytes;
    s.fits = fits && s.local_peak_bytes <= profile_.capacity_bytes;
    return s;
  }

  const Graph& g_;
  const Node& node_;
  const DeviceProfile& profile_;
  const SimOptions& options_;
  OperatorModel model_;
  std::vector<Operand> operands_;
  KernelContract contract_;
  std::string contract_note_;
};

double ratio(double value, double reference) { return reference == 0 ? 1.0 : value / reference; }

}  // namespace

std::string_view to_string(TensorKind kind) {
  switch (kind) {
    case TensorKind::kActivation:
      return "activation";
    case TensorKind::kCompactParameter:
      return "compact parameter";
    case TensorKind::kExpandedParameter:
      return "expanded parameter";
    case TensorKind::kWeights:
      return "weights";
    case TensorKind::kOutput:
      return "output";
  }
  return "?";
}

std::string_view to_string(ParameterReuse reuse) {
  return reuse == ParameterReuse::kReuse ? "reuse" : "reload per tile";
}

double SimReport::bytes_ratio() const {
  return ratio(static_cast<double>(total().bytes), static_cast<double>(ideal.bytes));
}
double SimReport::cycles_ratio() const { return ratio(total().cycles, ideal.cycles); }

SimReport simulate(const Graph& graph, const DeviceProfile& profile, const SimOptions& options) {
  if (profile.dma.external_bytes <= 0 || profile.capacity_bytes <= 0)
    fail("device '{}': NPU mode needs local and external memory (capacity_bytes = {}, dma.external_bytes = {})",
         profile.name, profile.capacity_bytes, profile.dma.external_bytes);
  if (profile.dma.bytes_per_cycle <= 0) fail("device '{}': dma.bytes_per_cycle must be positive", profile.name);
  SimReport r;
  r.graph = graph.name;
  r.device = profile;
  r.options = options;
  for (NodeId id : graph.order()) {
    OperatorSim s = OperatorSimulator(graph, id, profile, options).run();
    r.load += s.load;
    r.store += s.store;
    r.ideal += s.ideal;
    for (const TensorTraffic& t : s.tensors) {
      if (t.kind == TensorKind::kCompactParameter) {
        r.compact_parameters += t.traffic;
        r.compact_parameter_ideal_bytes += t.tensor_bytes;
      } else if (t.kind == TensorKind::kExpandedParameter) {
        r.expanded_parameters += t.traffic;
        r.expanded_parameter_ideal_bytes += t.tensor_bytes;
      } else if (t.kind == TensorKind::kWeights) {
        r.weights += t.traffic;
        r.weight_ideal_bytes += t.tensor_bytes;
      }
    }
    if (s.local_peak_bytes > r.local_peak_bytes) {
      r.local_peak_bytes = s.local_peak_bytes;
      r.local_peak_node = s.node;
    }
    r.fits_local = r.fits_local && s.fits;
    r.generic_operators += s.generic ? 1 : 0;
    r.operators.push_back(std::move(s));
  }
  // The tensors themselves live in external memory: the whole-tensor plan against it.
  DeviceProfile external = profile;
  external.capacity_bytes = profile.dma.external_bytes;
  const MemoryPlan plan = plan_memory(graph, external, {}, {.algorithm = allocate::Algorithm::kGreedy});
  r.external_bytes_needed = plan.arena_bytes;
  r.fits_external = plan.fits;
  return r;
}

}  // namespace memledger::sim
