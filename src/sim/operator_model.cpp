#include "operator_model.h"

#include <algorithm>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/ir/op_table.h"

namespace memledger::sim {
namespace {

std::string axis_name(const Value& v, size_t axis) {
  if (axis < v.roles.size() && v.roles[axis] != AxisRole::kOther)
    return std::string(1, static_cast<char>(v.roles[axis]));
  return "axis " + std::to_string(axis);
}

// The grid of an output: its axes, the channel axis (role C) as channel blocks, the others
// spatial and split outer to inner (N, H, W).
void output_grid(const Value& out, OperatorModel& m) {
  for (size_t a = 0; a < out.shape.size(); ++a) {
    const bool channel = a < out.roles.size() && out.roles[a] == AxisRole::kC;
    m.grid.push_back({axis_name(out, a), out.shape[a], channel ? AxisGroup::kChannel : AxisGroup::kSpatial, false});
    if (channel)
      m.channel = static_cast<int>(a);
    else
      m.spatial_ladder.push_back(static_cast<int>(a));
  }
}

TensorKind input_kind(const Value& v, const Value& out) {
  if (!v.is_constant()) return TensorKind::kActivation;
  return element_count(v.shape) >= element_count(out.shape) ? TensorKind::kExpandedParameter
                                                            : TensorKind::kCompactParameter;
}

// Right-aligned broadcasting onto the grid of the output's axes.
std::vector<AxisMap> broadcast_maps(const Shape& in, const Shape& out) {
  std::vector<AxisMap> maps(in.size());
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] == out[lead + i] && in[i] != 1)
      maps[i] = {.kind = AxisMap::Kind::kSame, .grid = static_cast<int>(lead + i)};
  return maps;
}

void add_input(OperatorModel& m, const Graph& g, ValueId id, TensorKind kind, std::vector<AxisMap> axes) {
  for (const TensorUse& t : m.tensors)
    if (t.value == id) return;  // Add(x, x) moves x once
  ML_CHECK(axes.size() == g.value(id).shape.size(), "axis maps for {}", g.value(id).name);
  m.tensors.push_back({id, kind, std::move(axes)});
}

void add_output(OperatorModel& m, const Graph& g, ValueId id, std::vector<AxisMap> axes) {
  ML_CHECK(axes.size() == g.value(id).shape.size(), "axis maps for {}", g.value(id).name);
  m.tensors.push_back({id, TensorKind::kOutput, std::move(axes)});
}

std::vector<AxisMap> same_maps(size_t rank) {
  std::vector<AxisMap> maps(rank);
  for (size_t a = 0; a < rank; ++a) maps[a] = {.kind = AxisMap::Kind::kSame, .grid = static_cast<int>(a)};
  return maps;
}

std::vector<AxisMap> scaled_maps(size_t rank) {
  std::vector<AxisMap> maps(rank);
  for (size_t a = 0; a < rank; ++a) maps[a] = {.kind = AxisMap::Kind::kScaled, .grid = static_cast<int>(a)};
  return maps;
}

bool valid(const Node& node, size_t input) { return input < node.inputs.size() && node.inputs[input].valid(); }

OperatorModel generic_model(const Graph& g, const Node& node, std::string note) {
  OperatorModel m;
  m.model = "generic";
  m.generic = true;
  m.note = std::move(note);
  const Value& out = g.value(node.outputs.at(0));
  output_grid(out, m);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!valid(node, i)) continue;
    const Value& v = g.value(node.inputs[i]);
    const bool same_rank = v.shape.size() == out.shape.size();
    add_input(m, g, node.inputs[i], input_kind(v, out),
              same_rank ? scaled_maps(v.shape.size()) : std::vector<AxisMap>(v.shape.size()));
  }
  for (ValueId o : node.outputs) {
    if (!o.valid()) continue;
    const Value& v = g.value(o);
    add_output(m, g, o,
               v.shape.size() == out.shape.size() ? scaled_maps(v.shape.size()) : std::vector<AxisMap>(v.shape.size()));
  }
  return m;
}

std::optional<OperatorModel> elementwise_model(const Graph& g, const Node& node) {
  const Value& out = g.value(node.outputs.at(0));
  OperatorModel m;
  m.model = "elementwise";
  output_grid(out, m);
  const OpRecord* record = find_op(node, g.opset);
  const bool per_channel_params =
      record && record->roles == RoleRule::kChannelFirst && record->channel_parameters_from >= 0;
  const bool qdq = record && record->roles == RoleRule::kQuantize;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!valid(node, i)) continue;
    const Value& v = g.value(node.inputs[i]);
    if (v.shape.size() > out.shape.size()) return std::nullopt;
    std::vector<AxisMap> maps;
    if (i > 0 && v.shape.size() == 1 && out.shape.size() > 1 && (per_channel_params || qdq)) {
      // A 1-D per-channel operand of BatchNormalization (axis 1) or per-axis QDQ (`axis`).
      const int64_t rank = static_cast<int64_t>(out.shape.size());
      int64_t axis = per_channel_params ? 1 : node.int_attr("axis", 1);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return std::nullopt;
      maps.resize(1);
      if (v.shape[0] == out.shape[static_cast<size_t>(axis)] && v.shape[0] != 1)
        maps[0] = {.kind = AxisMap::Kind::kSame, .grid = static_cast<int>(axis)};
    } else {
      const size_t lead = out.shape.size() - v.shape.size();
      for (size_t a = 0; a < v.shape.size(); ++a)
        if (v.shape[a] != out.shape[lead + a] && v.shape[a] != 1) return std::nullopt;
      maps = broadcast_maps(v.shape, out.shape);
    }
    add_input(m, g, node.inputs[i], input_kind(v, out), std::move(maps));
  }
  add_output(m, g, node.outputs[0], same_maps(out.shape.size()));
  for (size_t o = 1; o < node.outputs.size(); ++o)
    if (node.outputs[o].valid()) return std::nullopt;  // BatchNormalization in training mode
  return m;
}

struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pad_begin;
};

std::optional<WindowAttrs> window_attrs(const Node& node, const Shape& x, const Shape& y,
                                        const std::vector<int64_t>& kernel) {
  const size_t spatial = x.size() - 2;
  if (kernel.size() != spatial) return std::nullopt;
  WindowAttrs w;
  w.kernel = kernel;
  w.strides = node.ints_attr("strides", std::vector<int64_t>(spatial, 1));
  w.dilations = node.ints_attr("dilations", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = node.ints_attr("pads", std::vector<int64_t>(2 * spatial, 0));
  if (w.strides.size() != spatial || w.dilations.size() != spatial || pads.size() != 2 * spatial) return std::nullopt;
  const std::string auto_pad = node.string_attr("auto_pad", "NOTSET");
  for (size_t i = 0; i < spatial; ++i) {
    if (auto_pad == "NOTSET") {
      w.pad_begin.push_back(pads[i]);
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total =
          std::max<int64_t>(0, (y[2 + i] - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1 - x[2 + i]);
      w.pad_begin.push_back(auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2);
    } else {
      w.pad_begin.push_back(0);
    }
  }
  return w;
}

AxisMap window_map(const WindowAttrs& w, size_t i, int grid) {
  return {.kind = AxisMap::Kind::kWindow,
          .grid = grid,
          .kernel = w.kernel[i],
          .stride = w.strides[i],
          .pad_begin = w.pad_begin[i],
          .dilation = w.dilations[i]};
}

std::optional<OperatorModel> conv_model(const Graph& g, const Node& node) {
  if (!valid(node, 0) || !valid(node, 1)) return std::nullopt;
  const Value& x = g.value(node.inputs[0]);
  const Value& w = g.value(node.inputs[1]);
  const Value& out = g.value(node.outputs.at(0));
  if (x.shape.size() != 4 || w.shape.size() != 4 || out.shape.size() != 4) return std::nullopt;
  const int64_t group = node.int_attr("group", 1);
  if (group < 1 || out.shape[1] % group != 0 || x.shape[1] % group != 0) return std::nullopt;
  const auto attrs = window_attrs(node, x.shape, out.shape, {w.shape[2], w.shape[3]});
  if (!attrs) return std::nullopt;
  OperatorModel m;
  m.model = "conv";
  // Grid: the output N, M (output channels, as weight blocks), OH, OW.
  m.grid = {{"N", out.shape[0]}, {"C", out.shape[1], AxisGroup::kChannel}, {"H", out.shape[2]}, {"W", out.shape[3]}};
  m.channel = 1;
  m.spatial_ladder = {0, 2, 3};
  std::vector<AxisMap> xm(4);
  xm[0] = {.kind = AxisMap::Kind::kSame, .grid = 0};
  if (group > 1)
    xm[1] = {.kind = AxisMap::Kind::kGroups,
             .grid = 1,
             .out_per_group = out.shape[1] / group,
             .in_per_group = x.shape[1] / group};
  xm[2] = window_map(*attrs, 0, 2);
  xm[3] = window_map(*attrs, 1, 3);
  add_input(m, g, node.inputs[0], x.is_constant() ? TensorKind::kWeights : TensorKind::kActivation, xm);
  std::vector<AxisMap> wm(4);
  wm[0] = {.kind = AxisMap::Kind::kSame, .grid = 1};
  add_input(m, g, node.inputs[1], w.is_constant() ? TensorKind::kWeights : TensorKind::kActivation, wm);
  if (valid(node, 2)) {
    const Value& b = g.value(node.inputs[2]);
    if (b.shape.size() != 1) return std::nullopt;
    add_input(m, g, node.inputs[2], b.is_constant() ? TensorKind::kCompactParameter : TensorKind::kActivation,
              {{.kind = AxisMap::Kind::kSame, .grid = 1}});
  }
  add_output(m, g, node.outputs[0], same_maps(4));
  return m;
}

std::optional<OperatorModel> pool_model(const Graph& g, const Node& node) {
  const Value& x = g.value(node.inputs.at(0));
  const Value& out = g.value(node.outputs.at(0));
  if (x.shape.size() != 4 || out.shape.size() != 4) return std::nullopt;
  const auto attrs = window_attrs(node, x.shape, out.shape, node.ints_attr("kernel_shape"));
  if (!attrs) return std::nullopt;
  OperatorModel m;
  m.model = "pool";
  m.grid = {{"N", out.shape[0]}, {"C", out.shape[1], AxisGroup::kChannel}, {"H", out.shape[2]}, {"W", out.shape[3]}};
  m.channel = 1;
  m.spatial_ladder = {0, 2, 3};
  add_input(m, g, node.inputs[0], TensorKind::kActivation,
            {{.kind = AxisMap::Kind::kSame, .grid = 0},
             {.kind = AxisMap::Kind::kSame, .grid = 1},
             window_map(*attrs, 0, 2),
             window_map(*attrs, 1, 3)});
  for (size_t o = 1; o < node.outputs.size(); ++o)
    if (node.outputs[o].valid()) return std::nullopt;  // MaxPool's indices
  add_output(m, g, node.outputs[0], same_maps(4));
  return m;
}

// Global pools and a mean over H and W: the input rows are walked in pieces that
// accumulate into the output block, which stays in local memory until they are done.
std::optional<OperatorModel> global_pool_model(const Graph& g, const Node& node) {
  const Value& x = g.value(node.inputs.at(0));
  const Value& out = g.value(node.outputs.at(0));
  if (x.shape.size() != 4 || out.shape.size() != 4 || out.shape[2] != 1 || out.shape[3] != 1) return std::nullopt;
  const OpRecord* record = find_op(node, g.opset);
  if (record && record->roles == RoleRule::kReduction &&
      (node.ints_attr("axes") != std::vector<int64_t>{2, 3} || valid(node, 1)))
    return std::nullopt;
  OperatorModel m;
  m.model = "global-pool";
  m.grid = {{"N", x.shape[0]},
            {"C", x.shape[1], AxisGroup::kChannel},
            {"H", x.shape[2], AxisGroup::kSpatial, true},
            {"W", x.shape[3], AxisGroup::kSpatial, true}};
  m.channel = 1;
  m.spatial_ladder = {0, 2, 3};
  add_input(m, g, node.inputs[0], TensorKind::kActivation, same_maps(4));
  add_output(m, g, node.outputs[0],
             {{.kind = AxisMap::Kind::kSame, .grid = 0}, {.kind = AxisMap::Kind::kSame, .grid = 1}, {}, {}});
  return m;
}

// Gemm: Y[M,N] = A·B (+ C); the N columns of the output are split as blocks of B.
std::optional<OperatorModel> gemm_model(const Graph& g, const Node& node) {
  if (!valid(node, 0) || !valid(node, 1)) return std::nullopt;
  const Value& a = g.value(node.inputs[0]);
  const Value& b = g.value(node.inputs[1]);
  const Value& out = g.value(node.outputs.at(0));
  if (a.shape.size() != 2 || b.shape.size() != 2 || out.shape.size() != 2) return std::nullopt;
  OperatorModel m;
  m.model = "gemm";
  m.grid = {{"M", out.shape[0]}, {"N", out.shape[1], AxisGroup::kChannel}};
  m.channel = 1;
  m.spatial_ladder = {0};
  const AxisMap rows{.kind = AxisMap::Kind::kSame, .grid = 0}, cols{.kind = AxisMap::Kind::kSame, .grid = 1};
  const bool trans_a = node.int_attr("transA", 0) != 0, trans_b = node.int_attr("transB", 0) != 0;
  add_input(m, g, node.inputs[0], a.is_constant() ? TensorKind::kWeights : TensorKind::kActivation,
            trans_a ? std::vector<AxisMap>{{}, rows} : std::vector<AxisMap>{rows, {}});
  add_input(m, g, node.inputs[1], b.is_constant() ? TensorKind::kWeights : TensorKind::kActivation,
            trans_b ? std::vector<AxisMap>{cols, {}} : std::vector<AxisMap>{{}, cols});
  if (valid(node, 2)) {
    const Value& c = g.value(node.inputs[2]);
    if (c.shape.size() > 2) return std::nullopt;
    add_input(m, g, node.inputs[2], input_kind(c, out), broadcast_maps(c.shape, out.shape));
  }
  add_output(m, g, node.outputs[0], same_maps(2));
  return m;
}

// MatMul with a 2-D right operand: Y[..., M, N] = A[..., M, K] · B[K, N].
std::optional<OperatorModel> matmul_model(const Graph& g, const Node& node) {
  const Value& a = g.value(node.inputs.at(0));
  const Value& b = g.value(node.inputs.at(1));
  const Value& out = g.value(node.outputs.at(0));
  if (b.shape.size() != 2 || a.shape.size() < 2 || out.shape.size() != a.shape.size()) return std::nullopt;
  OperatorModel m;
  m.model = "matmul";
  const size_t rank = out.shape.size();
  for (size_t i = 0; i + 1 < rank; ++i) {
    m.grid.push_back({"axis " + std::to_string(i), out.shape[i]});
    m.spatial_ladder.push_back(static_cast<int>(i));
  }
  m.grid.push_back({"N", out.shape[rank - 1], AxisGroup::kChannel});
  m.channel = static_cast<int>(rank - 1);
  std::vector<AxisMap> am = same_maps(rank);
  am[rank - 1] = {};
  add_input(m, g, node.inputs[0], a.is_constant() ? TensorKind::kWeights : TensorKind::kActivation, am);
  add_input(m, g, node.inputs[1], b.is_constant() ? TensorKind::kWeights : TensorKind::kActivation,
            {{}, {.kind = AxisMap::Kind::kSame, .grid = static_cast<int>(rank - 1)}});
  add_output(m, g, node.outputs[0], same_maps(rank));
  return m;
}

}  // namespace

Range map_range(const AxisMap& map, int64_t axis_extent, Range tile, int64_t grid_extent) {
  switch (map.kind) {
    case AxisMap::Kind::kFull:
      return {0, axis_extent};
    case AxisMap::Kind::kSame:
      return tile;
    case AxisMap::Kind::kWindow: {
      const int64_t first = tile.begin * map.stride - map.pad_begin;
      const int64_t last = (tile.end - 1) * map.stride - map.pad_begin + (map.kernel - 1) * map.dilation;
      return {std::clamp<int64_t>(first, 0, axis_extent), std::clamp<int64_t>(last + 1, 0, axis_extent)};
    }
    case AxisMap::Kind::kGroups: {
      const int64_t g0 = tile.begin / map.out_per_group, g1 = (tile.end - 1) / map.out_per_group + 1;
      return {g0 * map.in_per_group, std::min(axis_extent, g1 * map.in_per_group)};
    }
    case AxisMap::Kind::kScaled: {
      if (grid_extent == 0) return {0, 0};
      const int64_t begin = tile.begin * axis_extent / grid_extent;
      const int64_t end = std::min(axis_extent, ceil_div(tile.end * axis_extent, grid_extent));
      return {begin, std::max(begin, end)};
    }
  }
  return {0, axis_extent};
}

OperatorModel model_operator(const Graph& g, const Node& node) {
  if (node.outputs.empty() || !node.outputs[0].valid()) return generic_model(g, node, "no output");
  const OpRecord* record = find_op(node, g.opset);
  if (!record) return generic_model(g, node, "no tile model for " + op_name(node));
  std::optional<OperatorModel> m;
  switch (record->tile) {
    case TileModel::kElementwise:
      m = elementwise_model(g, node);
      break;
    case TileModel::kConv:
      m = conv_model(g, node);
      break;
    case TileModel::kPool:
      m = pool_model(g, node);
      break;
    case TileModel::kGlobalPool:
      m = global_pool_model(g, node);
      break;
    case TileModel::kGemm:
      m = gemm_model(g, node);
      break;
    case TileModel::kMatMul:
      m = matmul_model(g, node);
      break;
    case TileModel::kGeneric:
      return generic_model(g, node, "no tile model for " + op_name(node));
  }
  if (!m) return generic_model(g, node, "shapes or attributes outside the " + node.op + " tile model");
  return *m;
}

}  // namespace memledger::sim
