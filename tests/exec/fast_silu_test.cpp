// The fast set's own SiLU loops (exec/fast/silu.h), AVX2 and, where the processor has it,
// AVX-512: close to x / (1 + e^-x) in double precision everywhere, -0 below -86 (and for
// -inf), NaN and +inf through, the same bits in place and out of place and for an element in a
// buffer's masked tail as in its body, the same bits from either width; and a Conv's SiLU runs
// through the loop of the ISA oneDNN runs (the node's description says which).
#include "exec/fast/silu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "exec/fast/prepared_node.h"
#include "memledger/exec/executor.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using exec::fast::effective_isa;
using exec::fast::Isa;
using exec::fast::silu;
using exec::fast::silu_available;

double silu_exact(double x) { return x / (1.0 + std::exp(-x)); }

// The loops this processor runs: AVX2 on every x86-64 machine the fast set serves (the
// effective ISA is below AVX2 only where oneDNN is capped further), AVX-512 where it has it.
std::vector<Isa> loops() {
  std::vector<Isa> isas;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isas.push_back(Isa::kAvx2);
  if (__builtin_cpu_supports("avx512f")) isas.push_back(Isa::kAvx512);
  return isas;
}

TEST(FastSilu, TheEffectiveIsaHasALoop) {
  EXPECT_EQ(silu_available(), effective_isa() != Isa::kOlder);
  EXPECT_FALSE(loops().empty()) << "a processor without AVX2: the fast set keeps oneDNN's swish";
}

TEST(FastSilu, MatchesTheFormulaOverTheFloatRange) {
  std::vector<float> x;
  for (float v = -120.0f; v <= 120.0f; v += 0.0137f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f, -1e-40f, 86.5f, -86.5f, 88.0f, -88.0f, 1e30f, -1e30f,
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest()})
    x.push_back(v);
  for (const Isa isa : loops()) {
    SCOPED_TRACE(std::string(exec::fast::isa_name(isa)));
    std::vector<float> y(x.size());
    silu(x.data(), y.data(), static_cast<int64_t>(x.size()), isa);
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
}

// Both widths do the same operations in the same order: the same bits, so a model's numbers
// do not depend on which machine ran it.
TEST(FastSilu, BothWidthsGiveTheSameBits) {
  std::vector<float> x;
  for (float v = -100.0f; v <= 100.0f; v += 0.00731f) x.push_back(v);
  std::vector<float> want(x.size());
  silu(x.data(), want.data(), static_cast<int64_t>(x.size()), Isa::kAvx2);
  for (const Isa isa : loops()) {
    std::vector<float> got(x.size());
    silu(x.data(), got.data(), static_cast<int64_t>(x.size()), isa);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0) << exec::fast::isa_name(isa) << " x = " << x[i];
  }
}

TEST(FastSilu, NanAndInfinitiesGoThrough) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const Isa isa : loops()) {
    std::vector<float> x{std::numeric_limits<float>::quiet_NaN(), inf, -inf, 2.0f}, y(4);
    silu(x.data(), y.data(), 4, isa);
    EXPECT_TRUE(std::isnan(y[0])) << exec::fast::isa_name(isa);
    EXPECT_EQ(y[1], inf);
    EXPECT_EQ(y[2], 0.0f);  // the limit, where x / (1 + e^-x) in float gives NaN
    EXPECT_NEAR(y[3], silu_exact(2.0), 1e-6);
  }
}

TEST(FastSilu, TailBodyAndInPlaceGiveTheSameBits) {
  std::vector<float> x(53);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -6.0f + 0.23f * static_cast<float>(i);
  for (const Isa isa : loops()) {
    SCOPED_TRACE(std::string(exec::fast::isa_name(isa)));
    std::vector<float> whole(x.size());
    silu(x.data(), whole.data(), static_cast<int64_t>(x.size()), isa);
    for (int64_t n = 1; n <= 53; ++n) {  // every tail length of either width, from several starts
      std::vector<float> part(x.begin(), x.begin() + n);
      silu(part.data(), part.data(), n, isa);  // in place
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(part[i], whole[i]) << "n " << n << " i " << i;
    }
    std::vector<float> guard(20, 7.0f);
    silu(x.data(), guard.data(), 3, isa);  // writes 3 elements, nothing after them
    for (size_t i = 3; i < guard.size(); ++i) EXPECT_EQ(guard[i], 7.0f) << i;
  }
}

// x → Conv → Sigmoid, Mul (SiLU): the Conv computes the SiLU with the effective ISA's loop
// after its primitive, not as oneDNN's swish post-op.
TEST(FastSilu, AConvsSiluRunsThroughTheLoop) {
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
  if (silu_available()) {
    const std::string loop = "silu (memledger " + std::string(exec::fast::isa_name(effective_isa())) + ")";
    EXPECT_NE(conv->describe().find(loop), std::string::npos) << conv->describe();
  } else {  // oneDNN's swish post-op
    EXPECT_EQ(conv->describe().find("silu (memledger"), std::string::npos) << conv->describe();
  }
  const std::vector<Tensor> inputs{testing::ramp({1, 4, 6, 6}, -2.0f, 0.031f, 67)};
  const Tensor want = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  const Tensor got = run_graph(g, inputs, {.kernels = KernelSet::kFast}).at(0);
  for (int64_t i = 0; i < got.elements(); ++i) EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5f) << i;
}

}  // namespace
}  // namespace memledger
