// QUANTIZE and DEQUANTIZE, per tensor. QUANTIZE from float is TFLite's AffineQuantize
// (round half away from zero of x / scale, plus the zero point, saturated); between integer
// types (int8, uint8, int16 in; int8, uint8, int16, int32 out) it is TFLite's Requantize:
// (q − zp_in) · s_in / s_out by MultiplyByQuantizedMultiplier, plus zp_out, saturated.
// DEQUANTIZE is scale · (q − zp) computed in double and stored as float, as TFLite does.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/tflite/common.h"
#include "exec/tflite/kernels.h"

namespace memledger::exec::tflite {
namespace {

bool is_quantized_type(DType t) { return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16; }

template <typename Out>
void from_float(KernelContext& ctx) {
  const TensorQuant qo = output_quant(ctx);
  const QuantRange r = type_range(ctx.out().dtype);
  const float* x = ctx.in(0).as<float>();
  Out* y = ctx.out().as<Out>();
  const int64_t n = ctx.in(0).elements();
  for (int64_t i = 0; i < n; ++i) {
    const float q = std::round(x[i] / qo.scale);
    // Saturate before the integer conversion (a float past int32's range would be undefined).
    const float bounded = std::isnan(q) ? 0.0f : std::fmin(std::fmax(q, -2147483520.0f), 2147483520.0f);
    const int64_t v = static_cast<int64_t>(bounded) + qo.zero_point;
    y[i] = static_cast<Out>(std::clamp<int64_t>(v, r.lo, r.hi));
  }
}

template <typename In, typename Out>
void requantize(KernelContext& ctx) {
  const TensorQuant qi = input_quant(ctx, 0), qo = output_quant(ctx);
  const FixedPointMultiplier m = quantize_multiplier(static_cast<double>(qi.scale) / static_cast<double>(qo.scale));
  const QuantRange r = type_range(ctx.out().dtype);
  const In* x = ctx.in(0).as<In>();
  Out* y = ctx.out().as<Out>();
  const int64_t n = ctx.in(0).elements();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = static_cast<int64_t>(multiply_by_quantized_multiplier(x[i] - qi.zero_point, m)) + qo.zero_point;
    y[i] = static_cast<Out>(std::clamp<int64_t>(v, r.lo, r.hi));
  }
}

template <typename In>
void dequantize(KernelContext& ctx) {
  const TensorQuant qi = input_quant(ctx, 0);
  const In* x = ctx.in(0).as<In>();
  float* y = ctx.out().as<float>();
  const int64_t n = ctx.in(0).elements();
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>(static_cast<double>(qi.scale) * (static_cast<int32_t>(x[i]) - qi.zero_point));
}

// Calls f(T{}) for int8, uint8, int16 and int32.
template <typename F>
void with_int_type(DType t, F&& f) {
  switch (t) {
    case DType::kInt8:
      return f(int8_t{});
    case DType::kUInt8:
      return f(uint8_t{});
    case DType::kInt16:
      return f(int16_t{});
    case DType::kInt32:
      return f(int32_t{});
    default:
      fail("no integer kernel for {}", dtype_name(t));
  }
}

void run_quantize(KernelContext& ctx) {
  const DType in = ctx.in(0).dtype, out = ctx.out().dtype;
  if (in == DType::kFloat32) {
    with_int_type(out, [&](auto o) { from_float<decltype(o)>(ctx); });
    return;
  }
  with_int_type(in, [&](auto i) { with_int_type(out, [&](auto o) { requantize<decltype(i), decltype(o)>(ctx); }); });
}

std::string check_quantize(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.outputs.empty()) return "needs an input and an output";
  const Value& x = g.value(n.inputs[0]);
  const Value& y = g.value(n.outputs[0]);
  if (x.shape != y.shape) return "output shape differs from the input's";
  if (x.dtype == DType::kFloat32) {
    if (!is_quantized_type(y.dtype)) return fmt::format("float32 to {}", dtype_name(y.dtype));
    return check_per_tensor(g, n, 0, true);
  }
  if (!is_quantized_type(x.dtype) || (!is_quantized_type(y.dtype) && y.dtype != DType::kInt32))
    return fmt::format("{} to {}", dtype_name(x.dtype), dtype_name(y.dtype));
  if (auto why = check_per_tensor(g, n, 0, false); !why.empty()) return why;
  return check_per_tensor(g, n, 0, true);
}

std::string check_dequantize(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.outputs.empty()) return "needs an input and an output";
  const Value& x = g.value(n.inputs[0]);
  const Value& y = g.value(n.outputs[0]);
  if (x.shape != y.shape) return "output shape differs from the input's";
  if (y.dtype != DType::kFloat32) return fmt::format("{} output (float32 expected)", dtype_name(y.dtype));
  if (!is_quantized_type(x.dtype) && x.dtype != DType::kInt32) return fmt::format("{} input", dtype_name(x.dtype));
  return check_per_tensor(g, n, 0, false);
}

}  // namespace

void add_quantize_kernels(KernelTable& t) {
  t.emplace_back("tflite:QUANTIZE", Kernel{check_quantize, run_quantize});
  t.emplace_back("tflite:DEQUANTIZE", Kernel{check_dequantize, [](KernelContext& ctx) {
                                               with_int_type(ctx.in(0).dtype,
                                                             [&](auto i) { dequantize<decltype(i)>(ctx); });
                                             }});
}

}  // namespace memledger::exec::tflite
