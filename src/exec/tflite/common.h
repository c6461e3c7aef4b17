// What every TFLite kernel reads from the graph before it computes, as TFLite's Prepare
// functions do: a tensor's (scale, zero point), the integer range a fused activation clamps
// to, window padding, and the float form of the fused activations. Private to exec/tflite/.
#pragma once

#include <cstdint>
#include <string>

#include "exec/kernel.h"
#include "exec/requantize.h"

namespace memledger::exec::tflite {

// One tensor's quantization: real = scale · (q − zero_point).
struct TensorQuant {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// The value's per-tensor parameters; an Error naming the node when it has none or has
// per-channel ones.
TensorQuant per_tensor(const Graph& graph, const Node& node, size_t input_or_output, bool is_output);
inline TensorQuant input_quant(const KernelContext& ctx, size_t i) { return per_tensor(ctx.graph, ctx.node, i, false); }
inline TensorQuant output_quant(const KernelContext& ctx, size_t i = 0) {
  return per_tensor(ctx.graph, ctx.node, i, true);
}
// Empty when the value has per-tensor quantization, else why not ("input 0 has no quantization").
std::string check_per_tensor(const Graph& graph, const Node& node, size_t index, bool is_output);
// The per-channel (or one) scales of a weight input.
const Quantization& weight_quant(const Graph& graph, const Node& node, size_t input);

// The integer range of a quantized type.
QuantRange type_range(DType type);
// TFLite's CalculateActivationRangeQuantized: the type's range narrowed by the fused
// activation ("NONE", "RELU", "RELU6", "RELU_N1_TO_1") through the output's quantization.
QuantRange activation_range(const std::string& activation, TensorQuant output, DType type);
// The node's fused_activation_function ("NONE" when absent).
std::string fused_activation(const Node& node);
// Float activations as TFLite's ActivationFunctionWithMinMax applies them.
float apply_activation(const std::string& activation, float x);
// Empty when `activation` is one a kernel applies, else why not.
std::string check_activation(const std::string& activation);

// TFLite's round (half away from zero) of f / scale, plus the zero point.
int32_t quantize_real(float f, TensorQuant q);

// Leading padding of one spatial axis (TFLite's ComputePaddingWithOffset), from the
// declared output extent; VALID pads nothing.
int64_t window_padding(const std::string& padding, int64_t stride, int64_t dilation, int64_t in, int64_t filter,
                       int64_t out);
// The output extent TFLite computes (ComputeOutSize); the kernels check the declared one.
int64_t window_out_size(const std::string& padding, int64_t stride, int64_t dilation, int64_t in, int64_t filter);

// Saturating conversion of an int32 to a quantized element type.
template <typename T>
T clamp_to(int32_t v, QuantRange range) {
  return static_cast<T>(v < range.lo ? range.lo : (v > range.hi ? range.hi : v));
}

}  // namespace memledger::exec::tflite
