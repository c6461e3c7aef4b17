// ONNX Slice: a start or end below 0 counts from the end of the axis; then, stepping forward,
// both are clamped to [0, size]; stepping backward, the start to [0, size - 1] and the end to
// [-1, size - 1].
#include "memledger/ir/slice_ranges.h"

#include <algorithm>

#include <fmt/format.h>

namespace memledger {

std::string slice_step_error(const std::vector<int64_t>& steps) {
  for (size_t k = 0; k < steps.size(); ++k) {
    if (steps[k] == 0) return fmt::format("steps[{}] is 0", k);
    if (steps[k] > kMaxSliceStep || steps[k] < -kMaxSliceStep)
      return fmt::format("steps[{}] is {}, beyond ±2^62 (no slice needs a step that large)", k, steps[k]);
  }
  return {};
}

SliceRanges slice_ranges(const Shape& dims, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                         std::vector<int64_t> axes, std::vector<int64_t> steps) {
  SliceRanges out;
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    out.error = fmt::format("starts, ends, axes and steps have {}, {}, {} and {} values", starts.size(), ends.size(),
                            axes.size(), steps.size());
    return out;
  }
  if (std::string e = slice_step_error(steps); !e.empty()) {
    out.error = std::move(e);
    return out;
  }
  const auto rank = static_cast<int64_t>(dims.size());
  std::vector<char> seen(dims.size(), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < -rank || axes[k] >= rank) {
      out = {{}, fmt::format("axes {} is out of range for rank {}", axes[k], rank)};
      return out;
    }
    const auto a = static_cast<size_t>(axes[k] < 0 ? axes[k] + rank : axes[k]);
    if (seen[a]) {
      out = {{}, fmt::format("axes names axis {} twice", a)};
      return out;
    }
    seen[a] = 1;
    const int64_t size = dims[a], step = steps[k];
    auto from_end = [&](int64_t v) { return v < 0 ? v + size : v; };  // no overflow: size >= 0
    SliceRange r{a, 0, step, 0};
    if (step > 0) {
      const int64_t e = std::clamp<int64_t>(from_end(ends[k]), 0, size);
      r.start = std::clamp<int64_t>(from_end(starts[k]), 0, size);
      r.count = e > r.start ? (e - r.start - 1) / step + 1 : 0;
    } else {
      const int64_t e = std::clamp<int64_t>(from_end(ends[k]), -1, size - 1);
      r.start = std::clamp<int64_t>(from_end(starts[k]), 0, std::max<int64_t>(size - 1, 0));
      r.count = size > 0 && r.start > e ? (r.start - e - 1) / -step + 1 : 0;
    }
    if (r.count == 0) r.start = 0;
    out.ranges.push_back(r);
  }
  return out;
}

}  // namespace memledger
