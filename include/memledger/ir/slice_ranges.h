// Slice's starts, ends, axes and steps normalised once, by ONNX's clamping rules, so that the
// shape rule, the value rule and the kernel cannot disagree on what a Slice selects (they
// were three copies, one of which clamped a backward start differently).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memledger/core/shape.h"

namespace memledger {

// Slice steps beyond ±2^62 are written by no exporter; the arithmetic on ±2^63 is a trap.
constexpr int64_t kMaxSliceStep = int64_t{1} << 62;

// What one sliced axis selects: `count` elements from `start` in steps of `step`.
struct SliceRange {
  size_t axis = 0;
  int64_t start = 0, step = 1, count = 0;
};

// The ranges, or (ranges empty, `error` set) why the arguments are not a slice of `dims`,
// phrased to follow "node X: ".
struct SliceRanges {
  std::vector<SliceRange> ranges;
  std::string error;
};

// The arguments as the operator reads them: empty `axes` means 0, 1, ...; empty `steps`
// means 1 for every axis.
SliceRanges slice_ranges(const Shape& dims, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                         std::vector<int64_t> axes, std::vector<int64_t> steps);

// The reason a step is refused (0, or beyond ±kMaxSliceStep), or empty; checked before the
// other arguments are known (steps may be constant where starts are not).
std::string slice_step_error(const std::vector<int64_t>& steps);

}  // namespace memledger
