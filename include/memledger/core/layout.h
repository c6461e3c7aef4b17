// The layout contract (DESIGN.md §4.1, principles P1–P4): the one place in the code that
// turns a logical shape into bytes and addresses. The size estimator and the address
// generator both ask the same object, so they cannot disagree.
//
// A layout is: a logical shape (ONNX order), element bits (1..64, packed: int4 is 4 bits),
// axis roles, a physical axis order (outer → inner), an alignment A in bytes, and the
// *aligned run*: the innermost physical axes whose elements are stored packed and
// contiguous, with the run's byte size rounded up to A.
//   run_bytes = align_up(ceil(run_elements × bits / 8), A)
//   bytes     = (elements / run_elements) × run_bytes
// Sub-byte types count bits first, then round to bytes, then to A (P4). Every
// multiplication is checked; a size that overflows is a user error.
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/core/axis_role.h"
#include "memledger/core/shape.h"

namespace memledger {

// Which physical axes form the aligned run.
enum class AlignedRun {
  kInner,   // the innermost physical axis (merged outward over unit axes if asked)
  kTensor,  // the whole tensor: only its base is aligned (host CPUs)
};

struct LayoutRules {
  int64_t alignment_bytes = 1;
  AlignedRun aligned_run = AlignedRun::kInner;
  // When the innermost run has extent 1 it merges with the next axis out, repeatedly:
  // C = 1 in NHWC stores a row of W instead of one padded pixel per element.
  bool unit_inner_merge = false;
};

// A position in memory: byte offset and bit offset inside that byte (0..7).
struct BitAddress {
  int64_t byte = 0;
  int bit = 0;
  int64_t in_bits() const { return byte * 8 + bit; }
  auto operator<=>(const BitAddress&) const = default;
};

class Layout {
 public:
  // `roles` may be empty (all axes of unknown role); `physical_order` lists logical axes
  // outer → inner and may be empty (the logical order). Throws Error on a negative
  // extent, bits outside 1..64, a bad permutation, or a size that overflows.
  Layout(Shape shape, int element_bits, AxisRoles roles, std::vector<int> physical_order, LayoutRules rules);

  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int element_bits() const { return element_bits_; }
  const AxisRoles& roles() const { return roles_; }
  const std::vector<int>& physical_order() const { return physical_order_; }
  const LayoutRules& rules() const { return rules_; }

  int64_t elements() const { return elements_; }
  // ceil(elements × bits / 8): what the values need with no padding at all.
  int64_t logical_bytes() const { return logical_bytes_; }
  // How many innermost physical axes form the aligned run.
  int run_axes() const { return run_axes_; }
  int64_t run_elements() const { return run_elements_; }
  int64_t run_bytes() const { return run_bytes_; }
  int64_t runs() const { return runs_; }
  // The physical size: runs × run_bytes. Padding is bytes() − logical_bytes().
  int64_t bytes() const { return bytes_; }
  int64_t padding_bytes() const { return bytes_ - logical_bytes_; }

  // Per logical axis, the distance in bits between neighbouring indices.
  const std::vector<int64_t>& strides_bits() const { return strides_bits_; }
  // Where the element at the logical `index` starts; the index must be in bounds.
  BitAddress offset(std::span<const int64_t> index) const;

  // The physical order written with role letters ("NHWC"), or axis numbers when a role
  // is unknown ("(0,2,1)").
  std::string physical_order_name() const;
  // What a run is, in words: "pixel" (a run of C), "row" (a run of W), "tensor", "run".
  std::string run_name() const;
  // The arithmetic behind bytes(), e.g. "560 pixels × align_up(12 × 8 bits = 12 B, 16) = 560 × 16 B".
  std::string explain_bytes() const;

 private:
  Shape shape_;
  int element_bits_;
  AxisRoles roles_;
  std::vector<int> physical_order_;
  LayoutRules rules_;
  int64_t elements_ = 0;
  int64_t logical_bytes_ = 0;
  int run_axes_ = 0;
  int64_t run_elements_ = 1;
  int64_t run_bytes_ = 0;
  int64_t runs_ = 0;
  int64_t bytes_ = 0;
  std::vector<int64_t> strides_bits_;
};

// A way to address a tensor's elements through bit strides; owns no bytes. A broadcast
// view has stride 0 on the axes it repeats (P1: broadcast is an address rule, not a copy).
class View {
 public:
  static View of(const Layout& layout);

  // NumPy broadcasting of this view to `target` (right-aligned; missing and unit axes get
  // stride 0). A user error naming `what` when the shapes are incompatible.
  View broadcast_to(const Shape& target, std::string_view what = "broadcast") const;

  const Shape& shape() const { return shape_; }
  int element_bits() const { return element_bits_; }
  const std::vector<int64_t>& strides_bits() const { return strides_bits_; }
  // True when some axis of extent > 1 has stride 0.
  bool is_broadcast() const;
  BitAddress offset(std::span<const int64_t> index) const;

 private:
  View(Shape shape, int element_bits, std::vector<int64_t> strides_bits);
  Shape shape_;
  int element_bits_;
  std::vector<int64_t> strides_bits_;
};

}  // namespace memledger
