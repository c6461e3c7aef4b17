// The fast set's own SiLU loop (exec/fast/silu.h): close to x / (1 + e^-x) in double
// precision everywhere, -0 below -86 (and for -inf), NaN and +inf through, the same bits in place and out of
// place and for an element in a buffer's masked tail as in its body; and a Conv's SiLU
// runs through it (the node's description says so).
#include "exec/fast/silu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "exec/fast/prepared_node.h"
#include "memledger/exec/executor.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using exec::fast::silu;
using exec::fast::silu_available;

double silu_exact(double x) { return x / (1.0 + std::exp(-x)); }

TEST(FastSilu, MatchesTheFormulaOverTheFloatRange) {
  if (!silu_available()) GTEST_SKIP() << "no AVX-512F on this CPU: the fast set keeps oneDNN's swish";
  std::vector<float> x;
  for (float v = -120.0f; v <= 120.0f; v += 0.0137f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f, -1e-40f, 86.5f, -86.5f, 88.0f, -88.0f, 1e30f, -1e30f,
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest()})
    x.push_back(v);
  std::vector<float> y(x.size());
  silu(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = silu_exact(x[i]);
    ASSERT_TRUE(std::isfinite(y[i])) << x[i];
    if (x[i] < -86.0f) {
      EXPECT_EQ(y[i], 0.0f) << "x = " << x[i];  // the exact value is under 1e-35
      continue;
    }
    // Relative 1e-6 where the value is a normal float; below, absolute.
    EXPECT_NEAR(y[i], want, std::max(1e-6 * std::fabs(want), 1e-37)) << "x = " << x[i];
  }
}

TEST(FastSilu, NanAndInfinitiesGoThrough) {
  if (!silu_available()) GTEST_SKIP() << "no AVX-512F on this CPU";
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x{std::numeric_limits<float>::quiet_NaN(), inf, -inf, 2.0f}, y(4);
  silu(x.data(), y.data(), 4);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], inf);
  EXPECT_EQ(y[2], 0.0f);  // the limit, where x / (1 + e^-x) in float gives NaN
  EXPECT_NEAR(y[3], silu_exact(2.0), 1e-6);
}

TEST(FastSilu, TailBodyAndInPlaceGiveTheSameBits) {
  if (!silu_available()) GTEST_SKIP() << "no AVX-512F on this CPU";
  std::vector<float> x(53);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -6.0f + 0.23f * static_cast<float>(i);
  std::vector<float> whole(x.size());
  silu(x.data(), whole.data(), static_cast<int64_t>(x.size()));
  for (int64_t n = 1; n <= 53; ++n) {  // every tail length from 1 to 15, from several starts
    std::vector<float> part(x.begin(), x.begin() + n);
    silu(part.data(), part.data(), n);  // in place
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(part[i], whole[i]) << "n " << n << " i " << i;
  }
  std::vector<float> guard(20, 7.0f);
  silu(x.data(), guard.data(), 3);  // writes 3 elements, nothing after them
  for (size_t i = 3; i < guard.size(); ++i) EXPECT_EQ(guard[i], 7.0f) << i;
}

// x → Conv → Sigmoid, Mul (SiLU): the Conv computes the SiLU with this loop after its
// primitive, not as oneDNN's swish post-op.
TEST(FastSilu, AConvsSiluRunsThroughTheLoop) {
  if (!silu_available()) GTEST_SKIP() << "no AVX-512F on this CPU";
  Graph g;
  const ValueId x =
      g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 4, 6, 6}, .roles = testing::kNCHW});
  const ValueId w = g.add_constant("w", testing::ramp({8, 4, 3, 3}, -0.3f, 0.013f, 29));
  auto value = [&](const char* name) {
    return g.add_value({.name = name, .shape = {1, 8, 6, 6}, .roles = testing::kNCHW});
  };
  const ValueId c = value("c"), s = value("s"), y = value("y");
  g.add_node({.name = "conv",
              .op = "Conv",
              .inputs = {x, w},
              .outputs = {c},
              .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  g.add_node({.name = "sigmoid", .op = "Sigmoid", .inputs = {c}, .outputs = {s}});
  g.add_node({.name = "silu", .op = "Mul", .inputs = {c, s}, .outputs = {y}});
  g.mark_output(y);
  std::string why;
  const auto conv = exec::fast::prepare(g, g.node(g.value(c).producer), {}, why);
  ASSERT_TRUE(conv) << why;
  EXPECT_TRUE(conv->fused());
  EXPECT_NE(conv->describe().find("silu (memledger avx512)"), std::string::npos) << conv->describe();
  const std::vector<Tensor> inputs{testing::ramp({1, 4, 6, 6}, -2.0f, 0.031f, 67)};
  const Tensor want = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  const Tensor got = run_graph(g, inputs, {.kernels = KernelSet::kFast}).at(0);
  for (int64_t i = 0; i < got.elements(); ++i) EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5f) << i;
}

}  // namespace
}  // namespace memledger
