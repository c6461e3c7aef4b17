#include "memledger/ir/quantization_check.h"

#include <fmt/format.h>

#include <cmath>

#include "memledger/core/error.h"

namespace memledger {

IntegerRange integer_range(DType type, const std::string& where) {
  switch (type) {
    case DType::kInt4:
      return {-8, 7};
    case DType::kUInt4:
      return {0, 15};
    case DType::kInt8:
      return {-128, 127};
    case DType::kUInt8:
      return {0, 255};
    case DType::kInt16:
      return {-32768, 32767};
    case DType::kUInt16:
      return {0, 65535};
    case DType::kInt32:
      return {INT32_MIN, INT32_MAX};
    default:
      fail("{}: a quantized value must be an integer type of at most 32 bits, not {}", where, dtype_name(type));
  }
}

void check_quantization(const Quantization& q, DType type, const Shape& shape, const std::string& where,
                        const std::string& scale_field, const std::string& zero_point_field) {
  const IntegerRange range = integer_range(type, where);
  if (q.scales.empty()) fail("{}: {} holds no scale", where, scale_field);
  if (q.zero_points.size() != q.scales.size())
    fail("{}: {} holds {} values but {} holds {}: they must match", where, zero_point_field, q.zero_points.size(),
         scale_field, q.scales.size());
  if (q.per_axis()) {
    if (q.axis >= static_cast<int>(shape.size()))
      fail("{}: axis {} is out of range for a value of rank {}", where, q.axis, shape.size());
    const int64_t extent = shape[static_cast<size_t>(q.axis)];
    if (static_cast<int64_t>(q.scales.size()) != extent)
      fail("{}: {} holds {} scales but axis {} has extent {}: per-axis parameters need one per index", where,
           scale_field, q.scales.size(), q.axis, extent);
  } else if (q.scales.size() != 1) {
    fail("{}: {} holds {} scales without an axis", where, scale_field, q.scales.size());
  }
  for (size_t i = 0; i < q.scales.size(); ++i) {
    const float s = q.scales[i];
    if (!std::isfinite(s) || !(s > 0.0f))
      fail("{}: {} [{}] is {}: a scale must be finite and greater than 0", where, scale_field, i, s);
  }
  for (size_t i = 0; i < q.zero_points.size(); ++i) {
    const int64_t z = q.zero_points[i];
    if (type == DType::kInt32 && z != 0)
      fail("{}: {} [{}] is {}: an int32 value's zero point must be 0", where, zero_point_field, i, z);
    if (z < range.min || z > range.max)
      fail("{}: {} [{}] is {}, outside {}'s range [{}, {}]", where, zero_point_field, i, z, dtype_name(type), range.min,
           range.max);
  }
}

std::string describe_quantization(const Quantization& q) {
  if (q.per_axis()) return fmt::format("per-axis[{}] {} scales", q.axis, q.scales.size());
  return fmt::format("s={:.4g} zp={}", q.scale(), q.zero_point());
}

}  // namespace memledger
