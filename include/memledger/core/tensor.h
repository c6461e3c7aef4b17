// A dense host tensor: a constant's compact values, a run's inputs and outputs. Elements
// are unpacked to their C type (int4 is held one per int8, float16 as its 16-bit pattern);
// how a device packs them is the layout contract's business, not this class's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "memledger/core/dtype.h"
#include "memledger/core/error.h"
#include "memledger/core/shape.h"

namespace memledger {

class MappedFile;

// Bytes one element takes in a host Tensor (int4 → 1, bool → 1, float16 → 2).
int host_element_bytes(DType type);

// The C type a Tensor of `type` holds, for typed access: int4 as int8, uint4 as uint8,
// float16 and bfloat16 as uint16_t bit patterns, bool as uint8_t.
template <typename T>
bool holds_type(DType type);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled. The size is checked: a shape whose bytes overflow is an Error.
  Tensor(DType dtype, Shape shape);
  // The values at `offset` of a mapped file, in place (no copy): the file holds them in the
  // host layout (not int4/uint4), aligned to the element size. The caller has checked the
  // range. The tensor keeps the mapping alive.
  static Tensor view(DType dtype, Shape shape, std::shared_ptr<const MappedFile> file, int64_t offset);
  // A copy of a mapped tensor owns its bytes; moving keeps the view.
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  ~Tensor();

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t elements() const { return elements_; }
  // Writable access to a mapped tensor copies the pages it writes (privately) and keeps
  // release_pages() from dropping them.
  std::span<std::byte> bytes() {
    if (mapping_) written_ = true;
    return mapping_ ? view_ : std::span<std::byte>(bytes_);
  }
  std::span<const std::byte> bytes() const { return mapping_ ? view_ : std::span<const std::byte>(bytes_); }

  template <typename T>
  std::span<T> data() {
    ML_CHECK(holds_type<T>(dtype_), "typed access to {} tensor", dtype_name(dtype_));
    return {reinterpret_cast<T*>(bytes().data()), static_cast<size_t>(elements_)};
  }
  template <typename T>
  std::span<const T> data() const {
    ML_CHECK(holds_type<T>(dtype_), "typed access to {} tensor", dtype_name(dtype_));
    return {reinterpret_cast<const T*>(bytes().data()), static_cast<size_t>(elements_)};
  }

  // Whether the values are a view of a mapped file (Tensor::view).
  bool is_mapped() const { return mapping_ != nullptr; }
  // A hint that nobody reads the values for a while (the fast kernels hold them reordered):
  // a mapped, never written tensor hands its pages back to the kernel, which reads them
  // again from the file on the next touch. Returns the bytes released (0 for heap tensors).
  int64_t release_pages() const;

  // Element i converted to double (float16/bfloat16 decoded); for any dtype.
  double element_as_double(int64_t i) const;
  // Sets element i from a double (rounded and saturated for integers).
  void set_element_from_double(int64_t i, double value);

  // The same values under another shape with the same element count.
  Tensor reshaped(Shape shape) const;

  bool operator==(const Tensor& other) const;

 private:
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  int64_t elements_ = 0;
  std::vector<std::byte> bytes_;
  // Set for a view of a mapped file: the values are view_, bytes_ is empty.
  std::shared_ptr<const MappedFile> mapping_;
  std::span<std::byte> view_;
  bool written_ = false;
};

float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);
float bfloat16_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);

}  // namespace memledger
