// QuantizeLinear and DequantizeLinear, per tensor (scalar scale) or per axis (a 1-D scale
// along `axis`), int8 and uint8 (and int32 for dequantization). Rounding is half to even,
// as ONNX specifies; quantized values saturate to the type's range.
#include <cmath>
#include <limits>

#include "kernel.h"

namespace memledger::exec {
namespace {

// Splits a tensor around the quantization axis: outer × channels × inner.
struct Blocks {
  int64_t outer = 1, channels = 1, inner = 1;
};

Blocks blocks(const KernelContext& ctx, const InputView& x, const InputView& scale) {
  Blocks b;
  if (scale.rank() == 0 || (scale.rank() == 1 && scale.shape[0] == 1 && x.rank() == 0)) {
    b.inner = x.elements();
    return b;
  }
  if (scale.rank() != 1) fail("node {}: scale must be a scalar or 1-D", ctx.node.label());
  const int64_t axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", 1), x.rank());
  if (scale.shape[0] != x.shape[axis] && scale.shape[0] != 1)
    fail("node {}: {} scales for axis {} of extent {}", ctx.node.label(), scale.shape[0], axis, x.shape[axis]);
  if (scale.shape[0] == 1) {
    b.inner = x.elements();
    return b;
  }
  for (int64_t i = 0; i < axis; ++i) b.outer *= x.shape[i];
  b.channels = x.shape[axis];
  for (int64_t i = axis + 1; i < x.rank(); ++i) b.inner *= x.shape[i];
  return b;
}

template <typename Q>
void quantize(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const InputView& scale = ctx.in(1);
  const Blocks b = blocks(ctx, x, scale);
  const float* px = x.as<float>();
  const float* ps = scale.as<float>();
  const Q* pz = ctx.has_input(2) ? ctx.in(2).as<Q>() : nullptr;
  Q* py = ctx.out().as<Q>();
  for (int64_t o = 0; o < b.outer; ++o)
    for (int64_t c = 0; c < b.channels; ++c) {
      const float s = ps[c];
      const int32_t zero = pz ? pz[c] : 0;
      const int64_t base = (o * b.channels + c) * b.inner;
      for (int64_t i = 0; i < b.inner; ++i) {
        const float q = std::nearbyint(px[base + i] / s) + static_cast<float>(zero);
        const float lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
        py[base + i] = static_cast<Q>(std::isnan(q) ? 0.0f : std::max(lo, std::min(hi, q)));
      }
    }
}

template <typename Q>
void dequantize(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const InputView& scale = ctx.in(1);
  const Blocks b = blocks(ctx, x, scale);
  const Q* px = x.as<Q>();
  const float* ps = scale.as<float>();
  const Q* pz = ctx.has_input(2) ? ctx.in(2).as<Q>() : nullptr;
  float* py = ctx.out().as<float>();
  for (int64_t o = 0; o < b.outer; ++o)
    for (int64_t c = 0; c < b.channels; ++c) {
      const float s = ps[c];
      const int64_t zero = pz ? pz[c] : 0;
      const int64_t base = (o * b.channels + c) * b.inner;
      for (int64_t i = 0; i < b.inner; ++i)
        py[base + i] = static_cast<float>(static_cast<int64_t>(px[base + i]) - zero) * s;
    }
}

}  // namespace

void add_quantization_kernels(KernelTable& t) {
  t.emplace_back(":QuantizeLinear", Kernel{
                                        .check =
                                            [](const Graph& g, const Node& n) {
                                              if (auto why = check_float_inputs(g, n, {0, 1}); !why.empty()) return why;
                                              return check_dtypes(g, n, 2, {DType::kInt8, DType::kUInt8});
                                            },
                                        .run =
                                            [](KernelContext& ctx) {
                                              if (ctx.out().dtype == DType::kInt8) return quantize<int8_t>(ctx);
                                              if (ctx.out().dtype == DType::kUInt8) return quantize<uint8_t>(ctx);
                                              fail("node {}: quantizing to {}", ctx.node.label(),
                                                   dtype_name(ctx.out().dtype));
                                            },
                                    });
  t.emplace_back(
      ":DequantizeLinear",
      Kernel{
          .check =
              [](const Graph& g, const Node& n) {
                if (auto why = check_dtypes(g, n, 0, {DType::kInt8, DType::kUInt8, DType::kInt32}); !why.empty())
                  return why;
                return check_float_inputs(g, n, {1});
              },
          .run =
              [](KernelContext& ctx) {
                switch (ctx.in(0).dtype) {
                  case DType::kInt8:
                    return dequantize<int8_t>(ctx);
                  case DType::kUInt8:
                    return dequantize<uint8_t>(ctx);
                  default:
                    return dequantize<int32_t>(ctx);
                }
              },
      });
}

}  // namespace memledger::exec
