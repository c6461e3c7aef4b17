// How far apart two tensors are, the figures `run --compare` and the conformance tests
// print: the largest absolute difference, the largest relative one, and whether they meet
// a tolerance |a − b| ≤ atol + rtol·|b| elementwise (numpy.allclose's rule, b the reference).
#pragma once

#include <cstdint>
#include <string>

#include "memledger/core/tensor.h"

namespace memledger {

struct TensorDifference {
  bool same_shape = true;        // dtype and shape agree; the figures below only then
  double max_abs = 0;            // max |a − b|
  double max_rel = 0;            // max |a − b| / |b| over elements with b ≠ 0
  double max_ref = 0;            // max |b|
  int64_t worst_index = -1;      // where max_abs is reached
  int64_t mismatches = 0;        // NaN in one and not the other counts too
  std::string describe() const;  // "max|diff| 1.2e-06 at 37, max rel 3.1e-07"
};

TensorDifference compare_tensors(const Tensor& actual, const Tensor& reference, double rtol, double atol);

}  // namespace memledger
