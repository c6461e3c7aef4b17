// A constant's values held by reference: copies of a graph share them. fit screens hundreds
// of patched copies of a model and optimize verifies every pass on a copy; with the values
// held by value each copy duplicated the weights (mobilenet_v2's 14 MB per candidate; memmove
// was a quarter of fit's profile). The values are immutable once held: a pass that changes a
// constant gives the value a new tensor.
#pragma once

#include <memory>
#include <utility>

#include "memledger/core/tensor.h"

namespace memledger {

class SharedTensor {
 public:
  SharedTensor() = default;
  SharedTensor(Tensor tensor) : tensor_(std::make_shared<const Tensor>(std::move(tensor))) {}  // NOLINT: implicit

  bool has_value() const { return tensor_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const Tensor& operator*() const {
    ML_CHECK(tensor_, "a value without constant data");
    return *tensor_;
  }
  const Tensor* operator->() const { return &**this; }
  void reset() { tensor_.reset(); }

 private:
  std::shared_ptr<const Tensor> tensor_;
};

}  // namespace memledger
