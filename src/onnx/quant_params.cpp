#include "onnx/quant_params.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/ir/quantization_check.h"

namespace memledger::onnx_io {
namespace {

std::string field(const Graph& g, const Node& node, size_t input, const char* what) {
  return fmt::format("{} '{}' (input {})", what, g.value(node.inputs[input]).name, input);
}

// The index of element `e` of a tensor of `shape` along `axis`.
int64_t coordinate(const Shape& shape, int64_t e, int axis) {
  int64_t stride = 1;
  for (size_t a = shape.size(); a-- > static_cast<size_t>(axis) + 1;) stride *= shape[a];
  return (e / stride) % shape[static_cast<size_t>(axis)];
}

}  // namespace

std::optional<Quantization> constant_quantization(const Graph& g, const Node& node, ValueId integer, size_t scale_input,
                                                  size_t zero_point_input, int64_t axis) {
  const std::string where = "node " + node.label();
  if (scale_input >= node.inputs.size() || !node.inputs[scale_input].valid())
    fail("{}: input {} (the scale) is missing", where, scale_input);
  const Value& scale = g.value(node.inputs[scale_input]);
  const bool has_zp = zero_point_input < node.inputs.size() && node.inputs[zero_point_input].valid();
  if (!scale.is_constant() || (has_zp && !g.value(node.inputs[zero_point_input]).is_constant())) return std::nullopt;
  const std::string scale_field = field(g, node, scale_input, "scale");
  const std::string zp_field = has_zp ? field(g, node, zero_point_input, "zero point") : "the zero point";
  if (!dtype_is_float(scale.dtype)) fail("{}: {} is {}, not a float", where, scale_field, dtype_name(scale.dtype));
  if (scale.shape.size() > 1)
    fail("{}: {} has rank {}; a scale is a scalar or 1-D", where, scale_field, scale.shape.size());

  const Value& v = g.value(integer);
  Quantization q;
  for (int64_t i = 0; i < scale.constant->elements(); ++i)
    q.scales.push_back(static_cast<float>(scale.constant->element_as_double(i)));
  if (has_zp) {
    const Value& zp = g.value(node.inputs[zero_point_input]);
    if (zp.shape != scale.shape)
      fail("{}: {} has shape {} but {} has {}: they must match", where, zp_field, shape_to_string(zp.shape),
           scale_field, shape_to_string(scale.shape));
    for (int64_t i = 0; i < zp.constant->elements(); ++i) {
      const double z = zp.constant->element_as_double(i);
      q.zero_points.push_back(static_cast<int64_t>(std::llround(z)));
    }
  } else {
    q.zero_points.assign(q.scales.size(), 0);
  }
  if (q.scales.size() > 1) {
    const int64_t rank = static_cast<int64_t>(v.shape.size());
    if (axis < -rank || axis >= rank)
      fail("{}: axis {} is out of range for '{}' of rank {}", where, axis, v.name, rank);
    q.axis = static_cast<int>(axis < 0 ? axis + rank : axis);
  } else if (q.scales.empty()) {
    fail("{}: {} holds no value", where, scale_field);
  } else {
    q.scales.resize(1);
    q.zero_points.resize(1);
  }
  check_quantization(q, v.dtype, v.shape, where + ": value '" + v.name + "'", scale_field, zp_field);
  return q;
}

int weight_channel_axis(const Graph& g, const Node& node, const IntegerRule& rule) {
  const int rank = static_cast<int>(g.value(node.inputs[static_cast<size_t>(rule.weight_input)]).shape.size());
  int axis = rule.weight_channel_axis < 0 ? rule.weight_channel_axis + rank : rule.weight_channel_axis;
  if (!rule.transposed_by.empty() && rank == 2 && node.int_attr(std::string(rule.transposed_by), 0) != 0)
    axis = 1 - axis;
  return std::clamp(axis, 0, std::max(rank - 1, 0));
}

void check_accumulator(const Graph& g, const Node& node, ValueId x, ValueId w, ValueId bias, int w_out_axis) {
  const Value& xv = g.value(x);
  const Value& wv = g.value(w);
  if (!xv.quant || !wv.quant || !wv.is_constant() || wv.shape.empty()) return;
  const std::string where = "node " + node.label();
  const IntegerRange xr = integer_range(xv.dtype, where + ": value '" + xv.name + "'");
  const int64_t zx = xv.quant->zero_point();
  const int64_t x_span = std::max(xr.max - zx, zx - xr.min);
  const int64_t channels = wv.shape[static_cast<size_t>(w_out_axis)];
  // In double: exact far past int32's end, and no overflow for any tensor a file can state.
  std::vector<double> sum(static_cast<size_t>(channels), 0.0);
  const Tensor& wt = *wv.constant;
  for (int64_t e = 0; e < wt.elements(); ++e) {
    const int64_t zw = wv.quant->zero_point(wv.quant->per_axis() ? coordinate(wv.shape, e, wv.quant->axis) : 0);
    sum[static_cast<size_t>(coordinate(wv.shape, e, w_out_axis))] +=
        std::abs(wt.element_as_double(e) - static_cast<double>(zw));
  }
  const Value* bv = bias.valid() ? &g.value(bias) : nullptr;
  for (int64_t c = 0; c < channels; ++c) {
    double b = 0;
    if (bv && bv->is_constant() && bv->constant->elements() > 0)
      b = bv->constant->element_as_double(bv->constant->elements() == 1 ? 0
                                                                        : std::min(c, bv->constant->elements() - 1));
    const double worst = std::abs(b) + sum[static_cast<size_t>(c)] * static_cast<double>(x_span);
    if (worst > static_cast<double>(INT32_MAX))
      fail("{}: {}output channel {}: the worst-case accumulation |bias| + Σ|w − zp_w|·{} = {:.0f} overflows int32",
           where, bv ? fmt::format("bias '{}', ", bv->name) : std::string(), c, x_span, worst);
  }
}

}  // namespace memledger::onnx_io
