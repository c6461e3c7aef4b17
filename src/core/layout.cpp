#include "memledger/core/layout.h"

#include <algorithm>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"

#include <fmt/format.h>

namespace memledger {
namespace {

std::vector<int> checked_order(std::vector<int> order, size_t rank) {
  if (order.empty()) {
    order.resize(rank);
    for (size_t i = 0; i < rank; ++i) order[i] = static_cast<int>(i);
    return order;
  }
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = sorted.size() == rank;
  for (size_t i = 0; is_permutation && i < rank; ++i) is_permutation = sorted[i] == static_cast<int>(i);
  if (!is_permutation) fail("layout: physical order is not a permutation of {} axes", rank);
  return order;
}

BitAddress to_address(int64_t bits) { return {bits / 8, static_cast<int>(bits % 8)}; }

int64_t offset_bits(std::span<const int64_t> index, const Shape& shape, const std::vector<int64_t>& strides) {
  ML_CHECK(index.size() == shape.size(), "index rank {} vs shape rank {}", index.size(), shape.size());
  int64_t bits = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    ML_CHECK(index[i] >= 0 && index[i] < shape[i], "index {} out of [0,{}) on axis {}", index[i], shape[i], i);
    bits += index[i] * strides[i];
  }
  return bits;
}

}  // namespace

Layout::Layout(Shape shape, int element_bits, AxisRoles roles, std::vector<int> physical_order, LayoutRules rules)
    : shape_(std::move(shape)),
      element_bits_(element_bits),
      roles_(std::move(roles)),
      physical_order_(checked_order(std::move(physical_order), shape_.size())),
      rules_(rules) {
  const std::string what = "layout of " + shape_to_string(shape_);
  if (element_bits_ < 1 || element_bits_ > 64) fail("{}: element bits {} outside 1..64", what, element_bits_);
  if (roles_.empty()) roles_ = unknown_roles(shape_.size());
  if (roles_.size() != shape_.size()) fail("{}: {} axis roles for rank {}", what, roles_.size(), shape_.size());
  if (rules_.alignment_bytes < 1) fail("{}: alignment {} must be at least 1 byte", what, rules_.alignment_bytes);

  elements_ = element_count(shape_, what);
  logical_bytes_ = ceil_div(checked_mul(elements_, element_bits_, what), 8);

  // The run: innermost physical axes, merged outward over unit extents when asked.
  const int rank = static_cast<int>(shape_.size());
  auto inner_extent = [&](int k) {  // product of the k innermost physical extents
    int64_t product = 1;
    for (int i = rank - k; i < rank; ++i) product = checked_mul(product, shape_[physical_order_[i]], what);
    return product;
  };
  if (rules_.aligned_run == AlignedRun::kTensor) {
    run_axes_ = rank;
  } else {
    run_axes_ = std::min(rank, 1);
    while (rules_.unit_inner_merge && run_axes_ < rank && inner_extent(run_axes_) == 1) ++run_axes_;
  }
  run_elements_ = inner_extent(run_axes_);
  run_bytes_ = align_up(ceil_div(checked_mul(run_elements_, element_bits_, what), 8), rules_.alignment_bytes, what);
  runs_ = elements_ == 0 ? 0 : elements_ / run_elements_;
  bytes_ = checked_mul(runs_, run_bytes_, what);
  checked_mul(bytes_, 8, what);  // every bit offset must be representable

  strides_bits_.assign(shape_.size(), 0);
  int64_t in_run = element_bits_;
  int64_t across_runs = checked_mul(run_bytes_, 8, what);
  for (int i = rank - 1; i >= 0; --i) {
    const int axis = physical_order_[i];
    const int64_t extent = std::max<int64_t>(shape_[axis], 1);
    if (i >= rank - run_axes_) {
      strides_bits_[axis] = in_run;
      in_run = checked_mul(in_run, extent, what);
    } else {
      strides_bits_[axis] = across_runs;
      across_runs = checked_mul(across_runs, extent, what);
    }
  }
}

BitAddress Layout::offset(std::span<const int64_t> index) const {
  return to_address(offset_bits(index, shape_, strides_bits_));
}

std::string Layout::physical_order_name() const {
  const bool all_known = std::none_of(roles_.begin(), roles_.end(), [](AxisRole r) { return r == AxisRole::kOther; });
  std::string name;
  if (all_known) {
    for (int axis : physical_order_) name += static_cast<char>(roles_[axis]);
    return name;
  }
  name = "(";
  for (size_t i = 0; i < physical_order_.size(); ++i) name += (i ? "," : "") + std::to_string(physical_order_[i]);
  return name + ")";
}

std::string Layout::run_name() const {
  if (run_axes_ == rank() && rank() > 1) return "tensor";
  // The innermost run axis of extent > 1 names the run; unit axes merged into it don't.
  for (int i = rank() - 1; i >= rank() - run_axes_; --i) {
    const int axis = physical_order_[i];
    if (shape_[axis] == 1 && i > rank() - run_axes_) continue;
    if (roles_[axis] == AxisRole::kC) return "pixel";
    if (roles_[axis] == AxisRole::kW) return "row";
    break;
  }
  return run_axes_ == rank() ? "tensor" : "run";
}

std::string Layout::explain_bytes() const {
  const int64_t run_bits = run_elements_ * element_bits_;
  const std::string raw = run_bits % 8 == 0 ? std::to_string(run_bits / 8) : fmt::format("{:.1f}", run_bits / 8.0);
  return fmt::format("{} {}{} × align_up({} × {} bits = {} B, {}) = {} × {} B", runs_, run_name(),
                     runs_ == 1 ? "" : "s", run_elements_, element_bits_, raw, rules_.alignment_bytes, runs_,
                     run_bytes_);
}

View View::of(const Layout& layout) { return View(layout.shape(), layout.element_bits(), layout.strides_bits()); }

View::View(Shape shape, int element_bits, std::vector<int64_t> strides_bits)
    : shape_(std::move(shape)), element_bits_(element_bits), strides_bits_(std::move(strides_bits)) {}

View View::broadcast_to(const Shape& target, std::string_view what) const {
  if (target.size() < shape_.size())
    fail("{}: cannot broadcast {} to the lower-rank {}", what, shape_to_string(shape_), shape_to_string(target));
  const size_t lead = target.size() - shape_.size();
  std::vector<int64_t> strides(target.size(), 0);
  for (size_t i = lead; i < target.size(); ++i) {
    const int64_t extent = shape_[i - lead];
    if (extent == target[i]) {
      strides[i] = strides_bits_[i - lead];
    } else if (extent != 1) {
      fail("{}: cannot broadcast {} to {} (axis {}: {} vs {})", what, shape_to_string(shape_), shape_to_string(target),
           i, extent, target[i]);
    }
  }
  return View(target, element_bits_, std::move(strides));
}

bool View::is_broadcast() const {
  for (size_t i = 0; i < shape_.size(); ++i)
    if (shape_[i] > 1 && strides_bits_[i] == 0) return true;
  return false;
}

BitAddress View::offset(std::span<const int64_t> index) const {
  return to_address(offset_bits(index, shape_, strides_bits_));
}

}  // namespace memledger
