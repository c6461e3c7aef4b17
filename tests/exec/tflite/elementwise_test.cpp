// ADD, SUB, MUL, the activations, SOFTMAX, QUANTIZE and DEQUANTIZE on int8 against the
// real-valued result rounded once: TFLite's fixed-point paths stay within one unit (two
// for the 16-bit hard-swish and softmax approximations, as TFLite's own tests allow), and
// broadcasting, saturation and the output zero point hold exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/tflite/kernel_case.h"

namespace memledger::tflite_test {
namespace {

// Every int8 value once (256 elements), in a scrambled order.
std::vector<int8_t> all_int8() {
  std::vector<int8_t> v(256);
  for (int i = 0; i < 256; ++i) v[static_cast<size_t>(i)] = static_cast<int8_t>((i * 37 + 11) % 256 - 128);
  return v;
}

double quantize(double real, float scale, int zp, double lo = -128, double hi = 127) {
  return std::clamp(std::round(real / scale) + zp, lo, hi);
}

// Counts elements off by more than `tolerance` (and reports the first) and exact ones.
struct Agreement {
  int off = 0, exact = 0, total = 0;
};
template <typename T>
Agreement compare(const std::vector<T>& got, const std::vector<double>& want, int tolerance) {
  Agreement a;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(got[i] - want[i]);
    if (d > tolerance) {
      if (a.off == 0) ADD_FAILURE() << "element " << i << ": " << int{got[i]} << " vs " << want[i];
      ++a.off;
    }
    a.exact += d == 0;
    ++a.total;
  }
  return a;
}

void check_binary(const std::string& op, const std::string& act) {
  const auto a = seeded<int8_t>(2 * 3 * 4, -128, 127, 7);
  const auto b = seeded<int8_t>(4, -128, 127, 8);  // broadcast along the last axis
  const float sa = 0.03f, sb = 0.05f, so = op == "MUL" ? 0.06f : 0.07f;
  const int za = -3, zb = 10, zo = 4;
  KernelCase k(op);
  k.input(DType::kInt8, {2, 3, 4}, a, per_tensor(sa, za))
      .input(DType::kInt8, {4}, b, per_tensor(sb, zb))
      .output(DType::kInt8, {2, 3, 4}, per_tensor(so, zo))
      .attr("fused_activation_function", act);
  std::vector<double> want;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = sa * (a[i] - za), y = sb * (b[i % 4] - zb);
    const double r = op == "ADD" ? x + y : op == "SUB" ? x - y : x * y;
    want.push_back(quantize(r, so, zo, act == "RELU" ? zo : -128));
  }
  const Agreement g = compare(k.run<int8_t>(), want, 1);
  EXPECT_EQ(g.off, 0) << op;
  EXPECT_GE(g.exact, g.total * 8 / 10) << op;
}

TEST(TfliteElementwise, AddSubMulWithinOneUnitWithBroadcast) {
  check_binary("ADD", "NONE");
  check_binary("ADD", "RELU");
  check_binary("SUB", "NONE");
  check_binary("MUL", "NONE");
}

TEST(TfliteElementwise, AddMayWriteOverItsFirstOperand) {
  const auto a = seeded<int8_t>(16, -128, 127, 9), b = seeded<int8_t>(16, -128, 127, 10);
  auto make = [&] {
    auto k = std::make_unique<KernelCase>("ADD");
    k->input(DType::kInt8, {16}, a, per_tensor(0.1f, 1))
        .input(DType::kInt8, {16}, b, per_tensor(0.2f, -2))
        .output(DType::kInt8, {16}, per_tensor(0.25f, 0));
    return k;
  };
  EXPECT_EQ(make()->run<int8_t>(), make()->run<int8_t>(0, std::pair{size_t{0}, size_t{0}}));
}

void check_unary(const std::string& op, float si, int zi, float so, int zo, double (*f)(double), int tolerance) {
  const std::vector<int8_t> x = all_int8();
  KernelCase k(op);
  k.input(DType::kInt8, {256}, x, per_tensor(si, zi)).output(DType::kInt8, {256}, per_tensor(so, zo));
  std::vector<double> want;
  for (int8_t v : x) want.push_back(quantize(f(si * (v - zi)), so, zo));
  const Agreement g = compare(k.run<int8_t>(), want, tolerance);
  EXPECT_EQ(g.off, 0) << op;
  EXPECT_GE(g.exact, g.total * 9 / 10) << op << ": " << g.exact << " exact";
}

TEST(TfliteActivations, AgainstTheRealFunctions) {
  check_unary(
      "RELU", 0.04f, -20, 0.03f, -128, [](double x) { return std::max(0.0, x); }, 1);
  check_unary(
      "RELU6", 0.05f, 3, 0.025f, -128, [](double x) { return std::clamp(x, 0.0, 6.0); }, 1);
  check_unary(
      "LOGISTIC", 0.06f, 5, 1.0f / 256, -128, [](double x) { return 1 / (1 + std::exp(-x)); }, 1);
  check_unary(
      "TANH", 0.03f, -4, 1.0f / 128, 0, [](double x) { return std::tanh(x); }, 1);
  check_unary(
      "HARD_SWISH", 0.05f, 2, 0.04f, -40, [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; }, 2);
}

TEST(TfliteActivations, LogisticSaturatesPastTheInputRadius) {
  KernelCase k("LOGISTIC");
  k.input(DType::kInt8, {3}, std::vector<int8_t>{-128, 0, 127}, per_tensor(0.5f, 0))
      .output(DType::kInt8, {3}, per_tensor(1.0f / 256, -128));
  EXPECT_EQ(k.run<int8_t>(), (std::vector<int8_t>{-128, 0, 127}));
}

template <typename Out>
void check_softmax(float si, float beta, int tolerance) {
  const int64_t rows = 4, depth = 10;
  const auto x = seeded<int8_t>(static_cast<size_t>(rows * depth), -128, 127, 11);
  const bool wide = sizeof(Out) == 2;
  const float so = wide ? 1.0f / 65536 : 1.0f / 256;
  const int zo = wide ? -32768 : -128;
  KernelCase k("SOFTMAX");
  k.input(DType::kInt8, {rows, depth}, x, per_tensor(si, 0))
      .output(wide ? DType::kInt16 : DType::kInt8, {rows, depth}, per_tensor(so, zo))
      .attr("beta", beta);
  std::vector<double> want;
  for (int64_t r = 0; r < rows; ++r) {
    double max = -1e9, sum = 0;
    for (int64_t c = 0; c < depth; ++c) max = std::max<double>(max, x[static_cast<size_t>(r * depth + c)]);
    for (int64_t c = 0; c < depth; ++c) sum += std::exp(beta * si * (x[static_cast<size_t>(r * depth + c)] - max));
    for (int64_t c = 0; c < depth; ++c)
      want.push_back(quantize(std::exp(beta * si * (x[static_cast<size_t>(r * depth + c)] - max)) / sum, so, zo,
                              wide ? -32768 : -128, wide ? 32767 : 127));
  }
  const Agreement g = compare(k.run<Out>(), want, tolerance);
  EXPECT_EQ(g.off, 0);
}

TEST(TfliteSoftmax, Int8ToInt8AndInt16) {
  check_softmax<int8_t>(0.1f, 1.0f, 1);
  check_softmax<int8_t>(0.03f, 2.0f, 1);
  check_softmax<int16_t>(0.1f, 1.0f, 2);
}

TEST(TfliteSoftmax, RefusesAnOutputOffTheFixedScale) {
  KernelCase k("SOFTMAX");
  k.input(DType::kInt8, {1, 4}, std::vector<int8_t>(4), per_tensor(0.1f, 0))
      .output(DType::kInt8, {1, 4}, per_tensor(1.0f / 128, -128));
  EXPECT_NE(k.check().find("scale 1/256"), std::string::npos) << k.check();
}

TEST(TfliteQuantize, FloatInRoundsHalfAwayFromZero) {
  KernelCase k("QUANTIZE");
  k.input(DType::kFloat32, {6}, std::vector<float>{0.25f, -0.25f, 0.75f, 100.0f, -100.0f, 0.0f})
      .output(DType::kInt8, {6}, per_tensor(0.5f, 1));
  // 0.5 → 1, -0.5 → -1, 1.5 → 2, saturated, saturated, 0; plus zero point 1.
  EXPECT_EQ(k.run<int8_t>(), (std::vector<int8_t>{2, 0, 3, 127, -128, 1}));
}

TEST(TfliteQuantize, RequantizesBetweenIntegerTypes) {
  // int16 → int8 as keyword_scrambled's first node does, and int16 → int32 as its last.
  const std::vector<int16_t> x{-32768, -1000, -1, 0, 1, 255, 1000, 32767};
  const float si = 0.001f, so = 0.25f;
  KernelCase k("QUANTIZE");
  k.input(DType::kInt16, {8}, x, per_tensor(si, 0)).output(DType::kInt8, {8}, per_tensor(so, -3));
  std::vector<double> want;
  for (int16_t v : x) want.push_back(quantize(si * v, so, -3));
  EXPECT_EQ(compare(k.run<int8_t>(), want, 1).off, 0);
  KernelCase w("QUANTIZE");
  w.input(DType::kInt16, {8}, x, per_tensor(1.0f / 32768, -32768 / 2))
      .output(DType::kInt32, {8}, per_tensor(1.0f / 65536, 0));
  std::vector<int32_t> widened;
  for (int16_t v : x) widened.push_back(2 * (v + 16384));  // s_in / s_out = 2: exact
  EXPECT_EQ(w.run<int32_t>(), widened);
}

TEST(TfliteQuantize, DequantizeIsScaleTimesOffset) {
  KernelCase k("DEQUANTIZE");
  k.input(DType::kInt8, {3}, std::vector<int8_t>{-128, 0, 127}, per_tensor(0.5f, -1)).output(DType::kFloat32, {3});
  EXPECT_EQ(k.run<float>(), (std::vector<float>{-63.5f, 0.5f, 64.0f}));
}

}  // namespace
}  // namespace memledger::tflite_test
