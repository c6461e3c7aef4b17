// Quantization as part of a value (DESIGN.md §11), beside its dtype and layout: the stored
// integers q stand for the reals scale · (q − zero_point), with one (scale, zero point) for
// the whole tensor or one per index of an axis (per-channel weights). The importers put it
// on values (ONNX: folded from QuantizeLinear / DequantizeLinear pairs and QLinear operators;
// TFLite: the tensors' own parameters); the ledger counts a quantized value's real bytes.
//
// A node whose data values are quantized is an integer operator of the same name: Conv over
// an int8 input with a per-channel int8 weight and an int32 bias is the integer Conv; its
// output's quantization says how the int32 accumulator is requantized. How that rounding is
// done is the graph's requantization rule, one per model source.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace memledger {

struct Quantization {
  std::vector<float> scales;         // one (per tensor) or one per index of `axis`
  std::vector<int64_t> zero_points;  // as many as scales, each within the value's dtype
  int axis = -1;                     // the axis the parameters run along; -1: per tensor

  bool per_axis() const { return axis >= 0; }
  float scale(int64_t index = 0) const { return scales.size() == 1 ? scales[0] : scales[static_cast<size_t>(index)]; }
  int64_t zero_point(int64_t index = 0) const {
    return zero_points.size() == 1 ? zero_points[0] : zero_points[static_cast<size_t>(index)];
  }
  bool operator==(const Quantization&) const = default;
};

// How an integer operator turns its int32 accumulator into the output's integers.
enum class Requantization : uint8_t {
  // onnxruntime's: acc · (s_in · s_w / s_out) in float, rounded half to even, plus the
  // output's zero point, saturated (QLinearConv, QLinearMatMul). ONNX models.
  kFloatScale,
  // TFLite's: the real multiplier as a Q31 fixed-point multiplier and a shift
  // (QuantizeMultiplier), SaturatingRoundingDoublingHighMul then RoundingDivideByPOT,
  // plus the zero point, clamped to the fused activation's range. .tflite models.
  kFixedPoint,
};
std::string_view to_string(Requantization rule);

}  // namespace memledger
