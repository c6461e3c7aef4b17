// Loops over strided views: the shape is traversed row by row (the innermost axis is a
// row), with one element stride per operand per axis; a zero stride repeats an element
// (broadcast). Adjacent axes merge when every operand steps through them as one, so a
// per-channel [1,C,H,W] × [1,C,1,1] becomes C rows of H·W with a scalar parameter.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "memledger/core/shape.h"

namespace memledger::exec {

template <size_t K>
struct StridedLoop {
  Shape shape;                                  // at least one axis after merging
  std::array<std::vector<int64_t>, K> strides;  // per operand, one per axis

  StridedLoop(const Shape& s, std::array<std::vector<int64_t>, K> st) : shape(s), strides(std::move(st)) { merge(); }

  // body(offsets, n, inner_strides): one row of n elements per call; offsets and strides
  // in elements, per operand. Rows come in row-major order.
  template <typename F>
  void for_each_row(F&& body) const {
    const int rank = static_cast<int>(shape.size());
    std::array<int64_t, K> inner{};
    for (size_t k = 0; k < K; ++k) inner[k] = strides[k][rank - 1];
    const int64_t n = shape[rank - 1];
    if (n == 0) return;
    for (int64_t d : shape)
      if (d == 0) return;
    std::vector<int64_t> index(rank, 0);
    std::array<int64_t, K> offset{};
    while (true) {
      body(offset, n, inner);
      int axis = rank - 2;
      for (; axis >= 0; --axis) {
        ++index[axis];
        for (size_t k = 0; k < K; ++k) offset[k] += strides[k][axis];
        if (index[axis] < shape[axis]) break;
        for (size_t k = 0; k < K; ++k) offset[k] -= strides[k][axis] * shape[axis];
        index[axis] = 0;
      }
      if (axis < 0) return;
    }
  }

 private:
  void merge() {
    Shape s;
    std::array<std::vector<int64_t>, K> st;
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      if (shape[axis] == 1) continue;  // unit axes step nowhere
      bool mergeable = !s.empty();
      for (size_t k = 0; k < K && mergeable; ++k) mergeable = st[k].back() == strides[k][axis] * shape[axis];
      if (mergeable) {
        s.back() *= shape[axis];
        for (size_t k = 0; k < K; ++k) st[k].back() = strides[k][axis];
      } else {
        s.push_back(shape[axis]);
        for (size_t k = 0; k < K; ++k) st[k].push_back(strides[k][axis]);
      }
    }
    if (s.empty()) {
      s.push_back(1);
      for (size_t k = 0; k < K; ++k) st[k].push_back(0);
    }
    shape = std::move(s);
    strides = std::move(st);
  }
};

}  // namespace memledger::exec
