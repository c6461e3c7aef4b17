#include "memledger/fit/patch_rules.h"

#include <fmt/format.h>

#include "memledger/core/error.h"
#include "memledger/ir/accumulate_pool.h"
#include "memledger/ir/op_table.h"
#include "memledger/ir/window.h"

namespace memledger {
namespace {

PatchRule patch_rule(const Node& node) {
  const OpRecord* r = find_op(node);
  return r ? r->patch : PatchRule::kNone;
}

// One spatial axis of a window: kernel, stride, dilation, the pad before it, the input extent.
struct Axis {
  int64_t k = 1, s = 1, d = 1, pad_begin = 0, in = 0;
};

// H and W of a 2-D window (ir/window.h resolves auto_pad; its axes are padded to three).
std::vector<Axis> window_axes(const Graph& g, const Node& node) {
  const Shape& x = g.value(node.inputs.at(0)).shape;
  const Shape& y = g.value(node.outputs.at(0)).shape;
  std::vector<int64_t> kernel;
  const OpRecord* r = find_op(node);
  if (r && r->weight_input >= 0) {
    const Shape& w = g.value(node.inputs.at(static_cast<size_t>(r->weight_input))).shape;
    kernel.assign(w.begin() + 2, w.end());
  } else {
    kernel = node.ints_attr("kernel_shape");
  }
  if (x.size() != 4 || kernel.size() != 2)
    fail("node {}: a window over other than two spatial axes has no patch rule", node.label());
  const Window w = window(node, x, y, kernel);
  std::vector<Axis> axes;
  for (int a = kMaxSpatial - 2; a < kMaxSpatial; ++a)
    axes.push_back({.k = w.k[a], .s = w.stride[a], .d = w.dilation[a], .pad_begin = w.pad_begin[a], .in = w.in[a]});
  return axes;
}

// The input rows [lo, hi) that output rows [o0, o1) read, before clipping to [0, in).
std::pair<int64_t, int64_t> window_reach(const Axis& a, int64_t o0, int64_t o1) {
  return {o0 * a.s - a.pad_begin, (o1 - 1) * a.s - a.pad_begin + (a.k - 1) * a.d + 1};
}

// A Slice of H and W only, with step 1: its output box is its input's, shifted. Returns
// the start on H and W (normalised), or why it is not such a Slice.
std::string spatial_slice_starts(const Graph& g, const Node& node, int64_t& start_h, int64_t& start_w) {
  const Shape& x = g.value(node.inputs.at(0)).shape;
  if (x.size() != 4) return "its input is not 4-D";
  std::vector<int64_t> starts, axes, steps;
  if (node.inputs.size() == 1) {
    starts = node.ints_attr("starts");
    axes = node.ints_attr("axes");
  } else {
    auto ints = [&](size_t i, std::vector<int64_t>& out) -> bool {
      if (i >= node.inputs.size() || !node.inputs[i].valid()) return true;
      const Value& v = g.value(node.inputs[i]);
      if (!v.is_constant() || (v.dtype != DType::kInt64 && v.dtype != DType::kInt32)) return false;
      for (int64_t e = 0; e < v.constant->elements(); ++e)
        out.push_back(static_cast<int64_t>(v.constant->element_as_double(e)));
      return true;
    };
    std::vector<int64_t> ends;
    if (!ints(1, starts) || !ints(2, ends) || !ints(3, axes) || !ints(4, steps))
      return "its starts, ends, axes or steps are not constants";
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  start_h = start_w = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + 4 : axes[i];
    if (axis != 2 && axis != 3) return "it slices other axes than H and W";
    if (i < steps.size() && steps[i] != 1) return "it slices with a step other than 1";
    if (i >= starts.size()) return "it has fewer starts than axes";
    const int64_t dim = x[static_cast<size_t>(axis)];
    const int64_t start = std::clamp<int64_t>(starts[i] < 0 ? starts[i] + dim : starts[i], 0, dim);
    (axis == 2 ? start_h : start_w) = start;
  }
  return {};
}

// Spatial shape [.., H, W] of a non-data operand broadcasts over H and W.
bool broadcasts_over_hw(const Shape& shape) {
  const size_t r = shape.size();
  return (r < 1 || shape[r - 1] == 1) && (r < 2 || shape[r - 2] == 1);
}

}  // namespace

Box hull(const Box& a, const Box& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.h0, b.h0), std::max(a.h1, b.h1), std::min(a.w0, b.w0), std::max(a.w1, b.w1)};
}

std::string box_to_string(const Box& b) { return fmt::format("[{},{})x[{},{})", b.h0, b.h1, b.w0, b.w1); }

std::string patch_rule_problem(const Graph& g, const Node& node, const std::vector<char>& is_data) {
  auto data = [&](ValueId v) { return v.valid() && is_data[static_cast<size_t>(v.index)] != 0; };
  if (node.outputs.empty() || !node.outputs[0].valid()) return "has no output";
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i].valid() && !g.consumers(node.outputs[i]).empty())
      return fmt::format("its output {} is read, and only single-output operators have a patch rule", i);
  const Value& y = g.value(node.outputs[0]);
  if (y.shape.size() != 4) return fmt::format("its output {} is not 4-D", shape_to_string(y.shape));
  const PatchRule rule = patch_rule(node);
  const OpRecord* record = find_op(node);
  if (rule == PatchRule::kWindow) {
    if (record->weights_transposed) return "a transposed window has no patch rule";
    if (!data(node.inputs.at(0))) return "its input 0 is not on the data path";
    for (size_t i = 1; i < node.inputs.size(); ++i)
      if (data(node.inputs[i])) return fmt::format("its input {} (weights or bias) is computed from the input", i);
    if (node.op == "AveragePool" && node.int_attr("ceil_mode", 0) != 0 && node.int_attr("count_include_pad", 0) != 0)
      return "AveragePool with ceil_mode and count_include_pad has no patch rule";
    if (g.value(node.inputs[0]).shape.size() != 4) return "its input is not 4-D";
    try {
      window_axes(g, node);
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }
  if (rule == PatchRule::kSlice) {
    if (!data(node.inputs.at(0))) return "its input 0 is not on the data path";
    int64_t h = 0, w = 0;
    return spatial_slice_starts(g, node, h, w);
  }
  if (rule == PatchRule::kConcat) {
    const int64_t axis = node.int_attr("axis", 0);
    if (axis != 1 && axis != -3) return fmt::format("Concat over axis {}, not the channels", axis);
    for (ValueId in : node.inputs) {
      if (!data(in)) return "Concat of a value not on the data path";
      const Shape& s = g.value(in).shape;
      if (s.size() != 4 || s[2] != y.shape[2] || s[3] != y.shape[3]) return "Concat of inputs of another H or W";
    }
    return {};
  }
  if (rule != PatchRule::kPointwise) return fmt::format("operator {} has no patch rule", op_name(node));
  bool any_data = false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId in = node.inputs[i];
    if (!in.valid()) continue;
    const Shape& s = g.value(in).shape;
    if (data(in)) {
      any_data = true;
      if (s.size() != 4 || s[2] != y.shape[2] || s[3] != y.shape[3])
        return fmt::format("its input {} {} is broadcast over H or W", i, shape_to_string(s));
    } else if (record->channel_parameters_from >= 0 && i >= static_cast<size_t>(record->channel_parameters_from) &&
               s.size() == 1) {
      continue;  // a per-channel vector ([C]), not broadcast by numpy's rule
    } else if (!broadcasts_over_hw(s)) {
      return fmt::format("its input {} '{}' {} varies over H and W", i, g.value(in).name, shape_to_string(s));
    }
  }
  if (!any_data) return "no input on the data path";
  return {};
}

bool is_strip_pool(const Graph& g, const Node& node) {
  if (is_accumulate_pool(node)) return true;
  if (patch_rule(node) != PatchRule::kGlobalPool || node.inputs.empty() || !node.inputs[0].valid()) return false;
  const Value& x = g.value(node.inputs[0]);
  return x.shape.size() == 4 && x.dtype == DType::kFloat32;
}

bool is_spatial_slice(const Graph& g, const Node& node) {
  int64_t h = 0, w = 0;
  return patch_rule(node) == PatchRule::kSlice && spatial_slice_starts(g, node, h, w).empty();
}

Box needed_input_box(const Graph& g, const Node& node, size_t input, const Box& out) {
  if (patch_rule(node) == PatchRule::kSlice) {
    ML_CHECK(input == 0, "node {}: input {} of a Slice has no box", node.label(), input);
    int64_t h = 0, w = 0;
    const std::string why = spatial_slice_starts(g, node, h, w);
    ML_CHECK(why.empty(), "node {}: {}", node.label(), why);
    return {out.h0 + h, out.h1 + h, out.w0 + w, out.w1 + w};
  }
  if (patch_rule(node) != PatchRule::kWindow) return out;
  ML_CHECK(input == 0, "node {}: input {} of a window has no box", node.label(), input);
  const std::vector<Axis> axes = window_axes(g, node);
  const auto [h_lo, h_hi] = window_reach(axes[0], out.h0, out.h1);
  const auto [w_lo, w_hi] = window_reach(axes[1], out.w0, out.w1);
  return {std::max<int64_t>(h_lo, 0), std::min(h_hi, axes[0].in), std::max<int64_t>(w_lo, 0),
          std::min(w_hi, axes[1].in)};
}

Attributes patched_attributes(const Graph& g, const Node& node, const Box& out) {
  Attributes attributes = node.attributes;
  if (patch_rule(node) != PatchRule::kWindow) return attributes;
  const std::vector<Axis> axes = window_axes(g, node);
  const auto [h_lo, h_hi] = window_reach(axes[0], out.h0, out.h1);
  const auto [w_lo, w_hi] = window_reach(axes[1], out.w0, out.w1);
  attributes["pads"] =
      std::vector<int64_t>{std::max<int64_t>(0, -h_lo), std::max<int64_t>(0, -w_lo),
                           std::max<int64_t>(0, h_hi - axes[0].in), std::max<int64_t>(0, w_hi - axes[1].in)};
  attributes.erase("auto_pad");
  // With exact pads the last window ends on the padded edge, so floor and ceil agree.
  attributes.erase("ceil_mode");
  return attributes;
}

int64_t node_macs(const Graph& g, const Node& node) {
  const OpRecord* r = find_op(node);
  return r && r->macs ? r->macs(g, node) : 0;
}

}  // namespace memledger
