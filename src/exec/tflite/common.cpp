// The Prepare-time facts shared by the TFLite kernels (see common.h).
#include "exec/tflite/common.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memledger::exec::tflite {
namespace {

const Value* value_at(const Graph& graph, const Node& node, size_t index, bool is_output) {
  const std::vector<ValueId>& ids = is_output ? node.outputs : node.inputs;
  if (index >= ids.size() || !ids[index].valid()) return nullptr;
  return &graph.value(ids[index]);
}

}  // namespace

std::string check_per_tensor(const Graph& graph, const Node& node, size_t index, bool is_output) {
  const char* what = is_output ? "output" : "input";
  const Value* v = value_at(graph, node, index, is_output);
  if (v == nullptr) return fmt::format("{} {} is missing", what, index);
  if (!v->quant || v->quant->scales.empty())
    return fmt::format("{} {} ('{}') has no quantization", what, index, v->name);
  if (v->quant->scales.size() != 1)
    return fmt::format("{} {} ('{}') has {} scales, one expected", what, index, v->name, v->quant->scales.size());
  if (!(v->quant->scales[0] > 0) || !std::isfinite(v->quant->scales[0]))
    return fmt::format("{} {} ('{}') has scale {}", what, index, v->name, v->quant->scales[0]);
  return {};
}

TensorQuant per_tensor(const Graph& graph, const Node& node, size_t index, bool is_output) {
  if (auto why = check_per_tensor(graph, node, index, is_output); !why.empty()) fail("node {}: {}", node.label(), why);
  const Quantization& q = *value_at(graph, node, index, is_output)->quant;
  return {.scale = q.scales[0], .zero_point = static_cast<int32_t>(q.zero_points.empty() ? 0 : q.zero_points[0])};
}

const Quantization& weight_quant(const Graph& graph, const Node& node, size_t input) {
  const Value* v = value_at(graph, node, input, false);
  if (v == nullptr || !v->quant || v->quant->scales.empty())
    fail("node {}: input {} has no quantization", node.label(), input);
  return *v->quant;
}

QuantRange type_range(DType type) {
  switch (type) {
    case DType::kInt8:
      return {-128, 127};
    case DType::kUInt8:
      return {0, 255};
    case DType::kInt16:
      return {-32768, 32767};
    case DType::kInt32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default:
      fail("no integer range for {}", dtype_name(type));
  }
}

int32_t quantize_real(float f, TensorQuant q) { return q.zero_point + static_cast<int32_t>(std::round(f / q.scale)); }

QuantRange activation_range(const std::string& activation, TensorQuant output, DType type) {
  QuantRange r = type_range(type);
  if (activation == "RELU") {
    r.lo = std::max(r.lo, quantize_real(0.0f, output));
  } else if (activation == "RELU6") {
    r.lo = std::max(r.lo, quantize_real(0.0f, output));
    r.hi = std::min(r.hi, quantize_real(6.0f, output));
  } else if (activation == "RELU_N1_TO_1") {
    r.lo = std::max(r.lo, quantize_real(-1.0f, output));
    r.hi = std::min(r.hi, quantize_real(1.0f, output));
  } else if (activation != "NONE") {
    fail("fused activation '{}' has no integer range", activation);
  }
  return r;
}

std::string fused_activation(const Node& node) { return node.string_attr("fused_activation_function", "NONE"); }

float apply_activation(const std::string& activation, float x) {
  if (activation == "RELU") return std::max(0.0f, x);
  if (activation == "RELU6") return std::min(6.0f, std::max(0.0f, x));
  if (activation == "RELU_N1_TO_1") return std::min(1.0f, std::max(-1.0f, x));
  if (activation == "TANH") return std::tanh(x);
  if (activation == "SIGN_BIT") return std::signbit(x) ? 1.0f : 0.0f;
  return x;
}

std::string check_activation(const std::string& activation) {
  for (const char* known : {"NONE", "RELU", "RELU6", "RELU_N1_TO_1"})
    if (activation == known) return {};
  return fmt::format("fused activation '{}' is not supported", activation);
}

int64_t window_out_size(const std::string& padding, int64_t stride, int64_t dilation, int64_t in, int64_t filter) {
  const int64_t effective = (filter - 1) * dilation + 1;
  if (stride <= 0) return 0;
  if (padding == "SAME") return (in + stride - 1) / stride;
  return (in + stride - effective) / stride;
}

int64_t window_padding(const std::string& padding, int64_t stride, int64_t dilation, int64_t in, int64_t filter,
                       int64_t out) {
  if (padding != "SAME") return 0;
  const int64_t effective = (filter - 1) * dilation + 1;
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + effective - in);
  return total / 2;
}

}  // namespace memledger::exec::tflite
