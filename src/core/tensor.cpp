#include "memledger/core/tensor.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "memledger/core/checked.h"
#include "memledger/core/mapped_file.h"

namespace memledger {

int host_element_bytes(DType type) {
  switch (type) {
    case DType::kBool:
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kInt8:
    case DType::kUInt8:
      return 1;
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
      return 8;
  }
  ML_CHECK(false, "unknown dtype");
  return 0;
}

template <typename T>
bool holds_type(DType type) {
  switch (type) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kUInt4:
      return std::is_same_v<T, uint8_t>;
    case DType::kInt8:
    case DType::kInt4:
      return std::is_same_v<T, int8_t>;
    case DType::kInt16:
      return std::is_same_v<T, int16_t>;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return std::is_same_v<T, uint16_t>;
    case DType::kInt32:
      return std::is_same_v<T, int32_t>;
    case DType::kInt64:
      return std::is_same_v<T, int64_t>;
    case DType::kFloat32:
      return std::is_same_v<T, float>;
    case DType::kFloat64:
      return std::is_same_v<T, double>;
  }
  return false;
}
template bool holds_type<uint8_t>(DType);
template bool holds_type<int8_t>(DType);
template bool holds_type<int16_t>(DType);
template bool holds_type<uint16_t>(DType);
template bool holds_type<int32_t>(DType);
template bool holds_type<int64_t>(DType);
template bool holds_type<float>(DType);
template bool holds_type<double>(DType);

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  elements_ = element_count(shape_, "tensor " + shape_to_string(shape_));
  const int64_t size = checked_mul(elements_, host_element_bytes(dtype_), "tensor " + shape_to_string(shape_));
  bytes_.assign(static_cast<size_t>(size), std::byte{0});
}

Tensor Tensor::view(DType dtype, Shape shape, std::shared_ptr<const MappedFile> file, int64_t offset) {
  ML_CHECK(dtype != DType::kInt4 && dtype != DType::kUInt4, "a mapped tensor cannot hold packed {}", dtype_name(dtype));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.elements_ = element_count(t.shape_, "tensor " + shape_to_string(t.shape_));
  const int64_t size = checked_mul(t.elements_, host_element_bytes(dtype), "tensor " + shape_to_string(t.shape_));
  t.view_ = file->bytes(offset, size);
  ML_CHECK(reinterpret_cast<uintptr_t>(t.view_.data()) % static_cast<uintptr_t>(host_element_bytes(dtype)) == 0,
           "mapped {} tensor at offset {} of {} is not aligned", dtype_name(dtype), offset, file->path());
  t.mapping_ = std::move(file);
  return t;
}

Tensor::Tensor(const Tensor& other)
    : dtype_(other.dtype_), shape_(other.shape_), elements_(other.elements_), bytes_(other.bytes_) {
  if (other.mapping_) bytes_.assign(other.view_.begin(), other.view_.end());
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

Tensor::~Tensor() = default;

int64_t Tensor::release_pages() const { return mapping_ && !written_ ? mapping_->release(view_) : 0; }

namespace {

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}
template <typename T>
T saturate(double value, double lo, double hi) {
  if (std::isnan(value)) return T(0);
  return static_cast<T>(std::nearbyint(std::min(std::max(value, lo), hi)));
}
template <typename T>
T saturate(double value) {
  return saturate<T>(value, static_cast<double>(std::numeric_limits<T>::lowest()),
                     static_cast<double>(std::numeric_limits<T>::max()));
}

}  // namespace

double Tensor::element_as_double(int64_t i) const {
  ML_CHECK(i >= 0 && i < elements_, "element {} of {}", i, elements_);
  const std::byte* p = bytes().data() + i * host_element_bytes(dtype_);
  switch (dtype_) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kUInt4:
      return load<uint8_t>(p);
    case DType::kInt8:
    case DType::kInt4:
      return load<int8_t>(p);
    case DType::kInt16:
      return load<int16_t>(p);
    case DType::kUInt16:
      return load<uint16_t>(p);
    case DType::kInt32:
      return load<int32_t>(p);
    case DType::kInt64:
      return static_cast<double>(load<int64_t>(p));
    case DType::kFloat16:
      return half_to_float(load<uint16_t>(p));
    case DType::kBFloat16:
      return bfloat16_to_float(load<uint16_t>(p));
    case DType::kFloat32:
      return load<float>(p);
    case DType::kFloat64:
      return load<double>(p);
  }
  return 0;
}

void Tensor::set_element_from_double(int64_t i, double v) {
  ML_CHECK(i >= 0 && i < elements_, "element {} of {}", i, elements_);
  std::byte* p = bytes().data() + i * host_element_bytes(dtype_);
  switch (dtype_) {
    case DType::kBool:
      store<uint8_t>(p, v != 0 ? 1 : 0);
      break;
    case DType::kUInt8:
      store(p, saturate<uint8_t>(v));
      break;
    case DType::kUInt4:
      store(p, saturate<uint8_t>(v, 0, 15));
      break;
    case DType::kInt8:
      store(p, saturate<int8_t>(v));
      break;
    case DType::kInt4:
      store(p, saturate<int8_t>(v, -8, 7));
      break;
    case DType::kInt16:
      store(p, saturate<int16_t>(v));
      break;
    case DType::kUInt16:
      store(p, saturate<uint16_t>(v));
      break;
    case DType::kInt32:
      store(p, saturate<int32_t>(v));
      break;
    case DType::kInt64:
      store(p, saturate<int64_t>(v));
      break;
    case DType::kFloat16:
      store(p, float_to_half(static_cast<float>(v)));
      break;
    case DType::kBFloat16:
      store(p, float_to_bfloat16(static_cast<float>(v)));
      break;
    case DType::kFloat32:
      store(p, static_cast<float>(v));
      break;
    case DType::kFloat64:
      store(p, v);
      break;
  }
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor out = *this;
  if (element_count(shape) != elements_)
    fail("cannot reshape {} to {}", shape_to_string(shape_), shape_to_string(shape));
  out.shape_ = std::move(shape);
  return out;
}

bool Tensor::operator==(const Tensor& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ && std::ranges::equal(bytes(), other.bytes());
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to infinity
  if (abs < 0x38800000u) {                                  // subnormal half or zero: round to nearest even
    const float magic = std::bit_cast<float>(0x3f000000u);  // 0.5, shifts mantissa into place
    const float r = std::bit_cast<float>(abs) + magic;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(r) - std::bit_cast<uint32_t>(magic)));
  }
  const uint32_t mantissa_odd = (abs >> 13) & 1u;
  const uint32_t rounded = abs + 0xc8000fffu + mantissa_odd;  // rebias exponent (−112 << 23) and round to even
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

float bfloat16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t float_to_bfloat16(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + rounding) >> 16);
}

}  // namespace memledger
