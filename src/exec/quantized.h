// What the integer kernels (kernels_quantized_*.cpp) share: which nodes are integer
// operators, the checks of their quantization parameters, and typed access to 8-bit data.
// A node is the integer operator of its name when its data input 0 or its output 0 carries
// a quantization (ir/quantization.h); the kernel table then dispatches to the integer kernel.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "kernel.h"
#include "memledger/ir/integer_node.h"
#include "requantize.h"

namespace memledger::exec {

// The integer range of an 8-bit quantized dtype (int8 or uint8).
QuantRange quant_range(DType type);

// Why value `input` of `node` (an input index, or an output index when `output`) cannot be
// an 8-bit quantized operand of an integer kernel: absent quantization, a dtype other than
// int8/uint8, a scale that is not finite and positive, a zero point outside the type, or
// per-axis parameters (unless `per_axis_extent` > 0: then axis `per_axis_axis` with that many
// entries is allowed). Empty when it can.
std::string check_quantized_operand(const Graph& graph, const Node& node, size_t index, bool output,
                                    int64_t per_axis_extent = 0, int per_axis_axis = 0);

// The quantization of input i / output i (checked before the run).
const Quantization& input_quant(const KernelContext& ctx, size_t i);
const Quantization& output_quant(const KernelContext& ctx, size_t i = 0);

// Calls f(T{}) with T = int8_t or uint8_t for `type`.
template <typename F>
void with_8bit_type(DType type, F&& f) {
  if (type == DType::kInt8)
    f(int8_t{});
  else if (type == DType::kUInt8)
    f(uint8_t{});
  else
    fail("an integer kernel reads a {} tensor as 8-bit", dtype_name(type));
}

// A 256-entry table of y = quantize(f(dequantize(x))) under `rule`, indexed by x's byte
// (x − lo for the type's lowest value lo).
template <typename F>
std::array<int32_t, 256> activation_table(Requantization rule, const Quantization& x, DType x_type,
                                          const Quantization& y, DType y_type, F&& f) {
  std::array<int32_t, 256> table{};
  const QuantRange xr = quant_range(x_type), yr = quant_range(y_type);
  for (int32_t q = xr.lo; q <= xr.hi; ++q) {
    const float real = x.scale() * static_cast<float>(q - x.zero_point());
    table[static_cast<size_t>(q - xr.lo)] =
        quantize_value(rule, f(real), y.scale(), static_cast<int32_t>(y.zero_point()), yr);
  }
  return table;
}

}  // namespace memledger::exec
