// SVDF with its state as keyword_scrambled uses it (int8 input and feature weights, int16
// time weights and state): the state shifts one step exactly, the newest column and the
// output are within one unit of the real-valued computation, and writing the new state
// over the old one (the planner's state rule) changes nothing.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/tflite/kernel_case.h"

namespace memledger::tflite_test {
namespace {

constexpr int64_t kBatch = 2, kInput = 6, kFilters = 8, kRank = 2, kUnits = 4, kMemory = 5;
constexpr float kSx = 0.05f, kSf = 0.01f, kSt = 0.002f, kSs = 0.004f, kSo = 0.03f;
constexpr int kZx = -3, kZo = 7;

struct Svdf {
  std::vector<int8_t> x = seeded<int8_t>(kBatch * kInput, -128, 127, 21);
  std::vector<int8_t> wf = seeded<int8_t>(kFilters * kInput, -127, 127, 22);
  std::vector<int16_t> wt = seeded<int16_t>(kFilters * kMemory, -3000, 3000, 23);
  std::vector<int32_t> bias = seeded<int32_t>(kUnits, -20000, 20000, 24);
  std::vector<int16_t> state = seeded<int16_t>(kBatch * kFilters * kMemory, -2000, 2000, 25);

  std::unique_ptr<KernelCase> make() const {
    auto k = std::make_unique<KernelCase>("SVDF");
    k->input(DType::kInt8, {kBatch, kInput}, x, per_tensor(kSx, kZx))
        .input(DType::kInt8, {kFilters, kInput}, wf, per_tensor(kSf, 0))
        .input(DType::kInt16, {kFilters, kMemory}, wt, per_tensor(kSt, 0))
        .input(DType::kInt32, {kUnits}, bias, per_tensor(kSs * kSt, 0))
        .input(DType::kInt16, {kBatch, kFilters * kMemory}, state, per_tensor(kSs, 0))
        .output(DType::kInt8, {kBatch, kUnits}, per_tensor(kSo, kZo))
        .output(DType::kInt16, {kBatch, kFilters * kMemory}, per_tensor(kSs, 0))
        .attr("rank", kRank)
        .attr("fused_activation_function", std::string("RELU"));
    return k;
  }
};

TEST(TfliteSvdf, StateShiftsAndOutputsFollowTheRealComputation) {
  const Svdf s;
  auto k = s.make();
  const std::vector<int8_t> y = k->run<int8_t>(0);
  auto k2 = s.make();
  const std::vector<int16_t> next = k2->run<int16_t>(1);
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t f = 0; f < kFilters; ++f) {
      const int64_t row = (b * kFilters + f) * kMemory;
      for (int64_t j = 0; j + 1 < kMemory; ++j)
        ASSERT_EQ(next[static_cast<size_t>(row + j)], s.state[static_cast<size_t>(row + j + 1)]) << b << "," << f;
      double dot = 0;
      for (int64_t c = 0; c < kInput; ++c)
        dot += (s.x[static_cast<size_t>(b * kInput + c)] - kZx) * s.wf[static_cast<size_t>(f * kInput + c)];
      const double want = std::clamp(std::round(dot * kSx * kSf / kSs), -32768.0, 32767.0);
      ASSERT_LE(std::abs(next[static_cast<size_t>(row + kMemory - 1)] - want), 1) << b << "," << f;
    }
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t u = 0; u < kUnits; ++u) {
      double acc = s.bias[static_cast<size_t>(u)];
      for (int64_t r = 0; r < kRank; ++r) {
        const int64_t f = u * kRank + r;
        for (int64_t j = 0; j < kMemory; ++j)
          acc += static_cast<double>(s.wt[static_cast<size_t>(f * kMemory + j)]) *
                 next[static_cast<size_t>((b * kFilters + f) * kMemory + j)];
      }
      // TFLite Micro's integer SVDF applies no fused activation: only int8 saturation.
      const double want = std::clamp(std::round(acc * kSs * kSt / kSo) + kZo, -128.0, 127.0);
      EXPECT_LE(std::abs(y[static_cast<size_t>(b * kUnits + u)] - want), 1) << b << "," << u;
    }
}

TEST(TfliteSvdf, NewStateOverTheOldStateIsTheSame) {
  const Svdf s;
  auto apart = s.make();
  auto together = s.make();
  const auto state_apart = apart->run<int16_t>(1);
  const auto state_together = together->run<int16_t>(1, std::pair{size_t{4}, size_t{1}});
  EXPECT_EQ(state_apart, state_together);
  auto out_apart = s.make();
  auto out_together = s.make();
  EXPECT_EQ(out_apart->run<int8_t>(0), out_together->run<int8_t>(0, std::pair{size_t{4}, size_t{1}}));
}

TEST(TfliteSvdf, RefusesAStateOfTheWrongShape) {
  KernelCase k("SVDF");
  k.input(DType::kInt8, {1, 4}, std::vector<int8_t>(4), per_tensor(0.1f, 0))
      .input(DType::kInt8, {2, 4}, std::vector<int8_t>(8), per_tensor(0.1f, 0))
      .input(DType::kInt16, {2, 3}, std::vector<int16_t>(6), per_tensor(0.1f, 0))
      .omitted_input()
      .input(DType::kInt16, {1, 5}, std::vector<int16_t>(5), per_tensor(0.1f, 0))
      .output(DType::kInt8, {1, 2}, per_tensor(0.1f, 0))
      .attr("rank", int64_t{1});
  EXPECT_NE(k.check().find("[batch, memory · filters]"), std::string::npos) << k.check();
}

}  // namespace
}  // namespace memledger::tflite_test
