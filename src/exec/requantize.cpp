// The two requantization rules (see requantize.h).
#include "requantize.h"

#include "memledger/core/error.h"

namespace memledger::exec {

FixedPointMultiplier quantize_multiplier(double real_multiplier) {
  ML_CHECK(real_multiplier >= 0 && std::isfinite(real_multiplier), "a requantization multiplier of {}",
           real_multiplier);
  if (real_multiplier == 0) return {};
  int shift = 0;
  const double q = std::frexp(real_multiplier, &shift);  // q in [0.5, 1)
  auto q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (q_fixed == (int64_t{1} << 31)) {
    q_fixed /= 2;
    ++shift;
  }
  if (shift < -31) return {};
  // TFLite refuses shifts past 30 (a multiplier of 2^30 or more); none arises from real scales.
  ML_CHECK(shift <= 30, "a requantization multiplier of {} is too large for a Q31 multiplier", real_multiplier);
  return {.multiplier = static_cast<int32_t>(q_fixed), .shift = shift};
}

Requantizer::Requantizer(Requantization rule, const std::vector<double>& multipliers, int32_t zero_point,
                         QuantRange range)
    : rule_(rule), zero_point_(zero_point), range_(range) {
  ML_CHECK(!multipliers.empty(), "a requantizer without multipliers");
  for (double m : multipliers) {
    if (rule == Requantization::kFloatScale)
      float_scales_.push_back(static_cast<float>(m));
    else
      fixed_.push_back(quantize_multiplier(m));
  }
}

int32_t quantize_value(Requantization rule, float real, float scale, int32_t zero_point, QuantRange range) {
  const float v = real / scale;
  const float r = rule == Requantization::kFloatScale ? std::nearbyint(v) : std::round(v);
  if (std::isnan(r)) return saturate(zero_point, range);
  const double shifted = static_cast<double>(r) + zero_point;
  return static_cast<int32_t>(std::clamp<double>(shifted, range.lo, range.hi));
}

}  // namespace memledger::exec
