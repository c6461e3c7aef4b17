#include "memledger/exec/compare.h"

#include <cmath>

#include <fmt/format.h>

namespace memledger {

TensorDifference compare_tensors(const Tensor& actual, const Tensor& reference, double rtol, double atol) {
  TensorDifference d;
  if (actual.dtype() != reference.dtype() || actual.shape() != reference.shape()) {
    d.same_shape = false;
    d.mismatches = std::max<int64_t>(1, reference.elements());
    return d;
  }
  for (int64_t i = 0; i < reference.elements(); ++i) {
    const double a = actual.element_as_double(i), b = reference.element_as_double(i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) ++d.mismatches;
      continue;
    }
    if (std::isinf(a) || std::isinf(b)) {
      if (a != b) ++d.mismatches;
      continue;
    }
    const double diff = std::fabs(a - b);
    d.max_ref = std::max(d.max_ref, std::fabs(b));
    if (diff > d.max_abs || d.worst_index < 0) {
      if (diff > d.max_abs) d.max_abs = diff;
      if (d.worst_index < 0 || diff >= d.max_abs) d.worst_index = i;
    }
    if (b != 0) d.max_rel = std::max(d.max_rel, diff / std::fabs(b));
    if (diff > atol + rtol * std::fabs(b)) ++d.mismatches;
  }
  return d;
}

std::string TensorDifference::describe() const {
  if (!same_shape) return "dtype or shape differ";
  return fmt::format("max|diff| {:.3g} at {}, max rel {:.3g}, max|ref| {:.3g}, {} beyond tolerance", max_abs,
                     worst_index, max_rel, max_ref, mismatches);
}

}  // namespace memledger
