// The integer kernels' shared checks (see quantized.h).
#include "quantized.h"

#include <cmath>

namespace memledger::exec {

QuantRange quant_range(DType type) {
  if (type == DType::kUInt8) return {0, 255};
  return {-128, 127};
}

std::string check_quantized_operand(const Graph& g, const Node& n, size_t index, bool output, int64_t per_axis_extent,
                                    int per_axis_axis) {
  const std::vector<ValueId>& list = output ? n.outputs : n.inputs;
  const std::string what = fmt::format("{} {}", output ? "output" : "input", index);
  if (index >= list.size() || !list[index].valid()) return what + " is missing";
  const Value& v = g.value(list[index]);
  if (v.dtype != DType::kInt8 && v.dtype != DType::kUInt8)
    return fmt::format("{} '{}' is {}, not int8 or uint8", what, v.name, dtype_name(v.dtype));
  if (!v.quant) return fmt::format("{} '{}' has no quantization", what, v.name);
  const Quantization& q = *v.quant;
  if (q.scales.empty() || q.scales.size() != q.zero_points.size())
    return fmt::format("{} '{}': {} scales and {} zero points", what, v.name, q.scales.size(), q.zero_points.size());
  if (q.per_axis() || q.scales.size() > 1) {
    if (per_axis_extent <= 0) return fmt::format("{} '{}' is quantized per axis", what, v.name);
    if (q.axis != per_axis_axis || static_cast<int64_t>(q.scales.size()) != per_axis_extent)
      return fmt::format("{} '{}': per-axis quantization along axis {} with {} entries, expected axis {} with {}", what,
                         v.name, q.axis, q.scales.size(), per_axis_axis, per_axis_extent);
  }
  const QuantRange r = quant_range(v.dtype);
  for (size_t i = 0; i < q.scales.size(); ++i) {
    if (!(q.scales[i] > 0) || !std::isfinite(q.scales[i]))
      return fmt::format("{} '{}': scale {} is not finite and positive", what, v.name, q.scales[i]);
    if (q.zero_points[i] < r.lo || q.zero_points[i] > r.hi)
      return fmt::format("{} '{}': zero point {} is outside {}", what, v.name, q.zero_points[i], dtype_name(v.dtype));
  }
  return {};
}

const Quantization& input_quant(const KernelContext& ctx, size_t i) {
  const Value& v = ctx.graph.value(ctx.node.inputs.at(i));
  ML_CHECK(v.quant.has_value(), "node {}: input {} has no quantization", ctx.node.label(), i);
  return *v.quant;
}

const Quantization& output_quant(const KernelContext& ctx, size_t i) {
  const Value& v = ctx.graph.value(ctx.node.outputs.at(i));
  ML_CHECK(v.quant.has_value(), "node {}: output {} has no quantization", ctx.node.label(), i);
  return *v.quant;
}

}  // namespace memledger::exec
