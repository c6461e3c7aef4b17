// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the pools on int8 NHWC data against a
// reference written here the plain way (explicitly padded input, real-valued arithmetic,
// rounded once): TFLite's fixed-point requantization may differ from the exact real result
// by one unit, never more; most elements agree exactly. Float kernels against the same
// reference without rounding. And the fixed facts: SAME padding puts the extra row at the
// end, the average pool rounds half away from zero, refused nodes say why.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/tflite/kernel_case.h"

namespace memledger::tflite_test {
namespace {

struct ConvSetup {
  int64_t n = 1, h = 7, w = 6, c = 3, oc = 4, kh = 3, kw = 3, stride = 2, dilation = 1, multiplier = 1;
  std::string padding = "SAME";
  bool depthwise = false;
};

int64_t out_size(const ConvSetup& s, int64_t in, int64_t k) {
  const int64_t eff = (k - 1) * s.dilation + 1;
  return s.padding == "SAME" ? (in + s.stride - 1) / s.stride : (in - eff + s.stride) / s.stride;
}

// Real-valued convolution of q-offset integers: out[b,y,x,o] = Σ (x − zp) · w + bias, in
// units of s_in · s_w[o], over a zero-point-padded input.
std::vector<double> reference_conv(const ConvSetup& s, const std::vector<int8_t>& x, int32_t zp,
                                   const std::vector<int8_t>& f, const std::vector<int32_t>& bias, int64_t oh,
                                   int64_t ow) {
  const int64_t eff_h = (s.kh - 1) * s.dilation + 1, eff_w = (s.kw - 1) * s.dilation + 1;
  const int64_t pad_h = std::max<int64_t>(0, (oh - 1) * s.stride + eff_h - s.h);
  const int64_t pad_w = std::max<int64_t>(0, (ow - 1) * s.stride + eff_w - s.w);
  const int64_t ph = s.h + pad_h, pw = s.w + pad_w;
  std::vector<int32_t> padded(static_cast<size_t>(s.n * ph * pw * s.c), 0);  // x − zp, zero outside
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t y = 0; y < s.h; ++y)
      for (int64_t xx = 0; xx < s.w; ++xx)
        for (int64_t c = 0; c < s.c; ++c)
          padded[static_cast<size_t>(((b * ph + y + pad_h / 2) * pw + xx + pad_w / 2) * s.c + c)] =
              x[static_cast<size_t>(((b * s.h + y) * s.w + xx) * s.c + c)] - zp;
  std::vector<double> out(static_cast<size_t>(s.n * oh * ow * s.oc));
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx)
        for (int64_t o = 0; o < s.oc; ++o) {
          double acc = bias.empty() ? 0 : bias[static_cast<size_t>(o)];
          for (int64_t ky = 0; ky < s.kh; ++ky)
            for (int64_t kx = 0; kx < s.kw; ++kx) {
              const int64_t py = y * s.stride + ky * s.dilation, px = xx * s.stride + kx * s.dilation;
              const int64_t base = ((b * ph + py) * pw + px) * s.c;
              if (s.depthwise) {
                acc += padded[static_cast<size_t>(base + o / s.multiplier)] *
                       f[static_cast<size_t>((ky * s.kw + kx) * s.oc + o)];
              } else {
                for (int64_t c = 0; c < s.c; ++c)
                  acc += padded[static_cast<size_t>(base + c)] *
                         f[static_cast<size_t>(((o * s.kh + ky) * s.kw + kx) * s.c + c)];
              }
            }
          out[static_cast<size_t>(((b * oh + y) * ow + xx) * s.oc + o)] = acc;
        }
  return out;
}

void check_conv(const ConvSetup& s, const std::string& activation) {
  const int64_t oh = out_size(s, s.h, s.kh), ow = out_size(s, s.w, s.kw);
  const float s_in = 0.05f, s_out = 0.11f;
  const int32_t zp_in = -7, zp_out = 5;
  std::vector<float> s_w;
  for (int64_t o = 0; o < s.oc; ++o) s_w.push_back(0.004f + 0.0013f * static_cast<float>(o));
  const auto x = seeded<int8_t>(static_cast<size_t>(s.n * s.h * s.w * s.c), -128, 127, 1);
  const Shape f_shape = s.depthwise ? Shape{1, s.kh, s.kw, s.oc} : Shape{s.oc, s.kh, s.kw, s.c};
  const auto f = seeded<int8_t>(static_cast<size_t>(s.kh * s.kw * s.oc * (s.depthwise ? 1 : s.c)), -127, 127, 2);
  const auto bias = seeded<int32_t>(static_cast<size_t>(s.oc), -3000, 3000, 3);
  KernelCase k(s.depthwise ? "DEPTHWISE_CONV_2D" : "CONV_2D");
  k.input(DType::kInt8, {s.n, s.h, s.w, s.c}, x, per_tensor(s_in, zp_in))
      .input(DType::kInt8, f_shape, f, Quantization{s_w, std::vector<int64_t>(s_w.size(), 0), s.depthwise ? 3 : 0})
      .input(DType::kInt32, {s.oc}, bias)
      .output(DType::kInt8, {s.n, oh, ow, s.oc}, per_tensor(s_out, zp_out))
      .attr("padding", s.padding)
      .attr("stride_h", s.stride)
      .attr("stride_w", s.stride)
      .attr("dilation_h_factor", s.dilation)
      .attr("dilation_w_factor", s.dilation)
      .attr("fused_activation_function", activation);
  if (s.depthwise) k.attr("depth_multiplier", s.multiplier);
  const std::vector<int8_t> got = k.run<int8_t>();
  const std::vector<double> ref = reference_conv(s, x, zp_in, f, bias, oh, ow);
  const double lo = activation == "NONE" ? -128 : zp_out,
               hi = activation == "RELU6" ? zp_out + std::round(6 / s_out) : 127;
  int exact = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double real = ref[i] * s_in * s_w[i % static_cast<size_t>(s.oc)] / s_out;
    const double want = std::clamp(std::round(real) + zp_out, std::max(-128.0, lo), std::min(127.0, hi));
    ASSERT_LE(std::abs(got[i] - want), 1)
        << "element " << i << " real " << real << " got " << int{got[i]} << " acc " << ref[i];
    exact += got[i] == want;
  }
  EXPECT_GE(exact, static_cast<int>(got.size() * 9 / 10)) << exact << " of " << got.size();
}

TEST(TfliteConv, Int8PerChannelWithinOneUnitOfTheRealResult) {
  check_conv({}, "NONE");
  check_conv({.stride = 1, .padding = "VALID"}, "RELU");
  check_conv({.h = 9, .w = 8, .stride = 1, .dilation = 2}, "RELU6");
  check_conv({.n = 2, .h = 5, .w = 5, .c = 2, .oc = 3, .kh = 1, .kw = 1, .stride = 1}, "NONE");
}

TEST(TfliteConv, Int8DepthwiseWithMultiplier) {
  check_conv({.c = 2, .oc = 6, .multiplier = 3, .depthwise = true}, "NONE");
  check_conv({.c = 4, .oc = 4, .stride = 1, .depthwise = true}, "RELU6");
  check_conv({.h = 96 / 8, .w = 96 / 8, .c = 1, .oc = 8, .multiplier = 8, .depthwise = true}, "RELU");
}

TEST(TfliteConv, SamePaddingPutsTheOddRowAtTheEnd) {
  // 4×4 input, 3×3 ones filter, stride 2, SAME: output 2×2, total padding 1 → 0 before, 1 after.
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  KernelCase k("CONV_2D");
  k.input(DType::kFloat32, {1, 4, 4, 1}, x)
      .input(DType::kFloat32, {1, 3, 3, 1}, std::vector<float>(9, 1.0f))
      .omitted_input()
      .output(DType::kFloat32, {1, 2, 2, 1})
      .attr("padding", std::string("SAME"))
      .attr("stride_h", int64_t{2})
      .attr("stride_w", int64_t{2});
  // Top-left window covers rows 0..2, columns 0..2: 0+1+2+4+5+6+8+9+10 = 45.
  // Bottom-right covers rows 2..3, columns 2..3 (the padding row/column after): 10+11+14+15.
  EXPECT_EQ(k.run<float>(), (std::vector<float>{45, 39, 66, 50}));
}

TEST(TfliteConv, RefusesWhatItCannotRun) {
  KernelCase k("CONV_2D");
  k.input(DType::kInt8, {1, 4, 4, 2}, std::vector<int8_t>(32), per_tensor(0.1f, 0))
      .input(DType::kInt8, {3, 1, 1, 2}, std::vector<int8_t>(6), Quantization{{0.1f, 0.2f}, {0, 0}, 0})
      .output(DType::kInt8, {1, 4, 4, 3}, per_tensor(0.1f, 0));
  EXPECT_NE(k.check().find("2 scales for 3 output channels"), std::string::npos) << k.check();
  KernelCase wrong("CONV_2D");
  wrong.input(DType::kFloat32, {1, 4, 4, 1}, std::vector<float>(16))
      .input(DType::kFloat32, {1, 3, 3, 1}, std::vector<float>(9))
      .output(DType::kFloat32, {1, 4, 4, 1})
      .attr("padding", std::string("VALID"));
  EXPECT_NE(wrong.check().find("TFLite computes 2"), std::string::npos) << wrong.check();
}

TEST(TfliteFullyConnected, Int8WithinOneUnitAndFlattensLeadingAxes) {
  const int64_t batches = 3, depth = 20, units = 7;
  const auto x = seeded<int8_t>(static_cast<size_t>(batches * depth), -128, 127, 4);
  const auto w = seeded<int8_t>(static_cast<size_t>(units * depth), -127, 127, 5);
  const auto bias = seeded<int32_t>(static_cast<size_t>(units), -500, 500, 6);
  const float s_in = 0.07f, s_w = 0.009f, s_out = 0.2f;
  const int32_t zp_in = 3, zp_w = 0, zp_out = -10;
  KernelCase k("FULLY_CONNECTED");
  k.input(DType::kInt8, {batches, 1, 4, 5}, x, per_tensor(s_in, zp_in))
      .input(DType::kInt8, {units, depth}, w, per_tensor(s_w, zp_w))
      .input(DType::kInt32, {units}, bias)
      .output(DType::kInt8, {batches, units}, per_tensor(s_out, zp_out))
      .attr("fused_activation_function", std::string("RELU"));
  const std::vector<int8_t> got = k.run<int8_t>();
  int exact = 0;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t o = 0; o < units; ++o) {
      double acc = bias[static_cast<size_t>(o)];
      for (int64_t i = 0; i < depth; ++i)
        acc += (x[static_cast<size_t>(b * depth + i)] - zp_in) * (w[static_cast<size_t>(o * depth + i)] - zp_w);
      const double want = std::clamp(std::round(acc * s_in * s_w / s_out) + zp_out, double{zp_out}, 127.0);
      const int8_t g = got[static_cast<size_t>(b * units + o)];
      ASSERT_LE(std::abs(g - want), 1) << b << "," << o;
      exact += g == want;
    }
  EXPECT_GE(exact, 18);
}

TEST(TflitePool, AverageRoundsHalfAwayFromZeroOverTheTapsInside) {
  // 2×2 input, 2×2 filter, stride 1, SAME: output 2×2; the last row/column windows are cut.
  KernelCase k("AVERAGE_POOL_2D");
  k.input(DType::kInt8, {1, 2, 2, 1}, std::vector<int8_t>{-1, -2, 3, 4}, per_tensor(0.5f, 0))
      .output(DType::kInt8, {1, 2, 2, 1}, per_tensor(0.5f, 0))
      .attr("padding", std::string("SAME"))
      .attr("filter_height", int64_t{2})
      .attr("filter_width", int64_t{2});
  // sums: 4/4 = 1; (-2 + 4)/2 = 1; (3 + 4)/2 = 3.5 → 4; 4/1 = 4.
  EXPECT_EQ(k.run<int8_t>(), (std::vector<int8_t>{1, 1, 4, 4}));
  KernelCase neg("AVERAGE_POOL_2D");
  neg.input(DType::kInt8, {1, 1, 2, 1}, std::vector<int8_t>{-1, -2}, per_tensor(0.5f, 0))
      .output(DType::kInt8, {1, 1, 1, 1}, per_tensor(0.5f, 0))
      .attr("padding", std::string("VALID"))
      .attr("filter_height", int64_t{1})
      .attr("filter_width", int64_t{2});
  EXPECT_EQ(neg.run<int8_t>(), (std::vector<int8_t>{-2}));  // -1.5 → -2
}

TEST(TflitePool, MaxAndActivation) {
  KernelCase k("MAX_POOL_2D");
  k.input(DType::kInt8, {1, 2, 4, 1}, std::vector<int8_t>{-9, -8, 50, 1, -7, -20, 2, 70}, per_tensor(0.1f, -5))
      .output(DType::kInt8, {1, 1, 2, 1}, per_tensor(0.1f, -5))
      .attr("padding", std::string("VALID"))
      .attr("stride_w", int64_t{2})
      .attr("stride_h", int64_t{2})
      .attr("filter_height", int64_t{2})
      .attr("filter_width", int64_t{2})
      .attr("fused_activation_function", std::string("RELU6"));
  // max -7 clamps up to zp (-5); max 70 clamps to zp + 60 = 55.
  EXPECT_EQ(k.run<int8_t>(), (std::vector<int8_t>{-5, 55}));
}

TEST(TflitePool, MeanOverSpatialAxes) {
  KernelCase k("MEAN");
  k.input(DType::kInt8, {1, 2, 2, 2}, std::vector<int8_t>{1, 10, 2, 20, 3, 30, 5, 41}, per_tensor(0.1f, 0))
      .input(DType::kInt32, {2}, std::vector<int32_t>{1, 2})
      .output(DType::kInt8, {1, 1, 1, 2}, per_tensor(0.1f, 0))
      .attr("keep_dims", int64_t{1});
  EXPECT_EQ(k.run<int8_t>(), (std::vector<int8_t>{2, 25}));  // 11/4 and 101/4, truncated
}

}  // namespace
}  // namespace memledger::tflite_test
