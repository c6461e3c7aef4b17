// The first differing byte of two tensors (0 when their sizes differ), or -1 when they are
// the same bytes: how the fast-kernel tests compare a fast run with the reference's.
#pragma once

#include <cstdint>

#include "memledger/core/tensor.h"

namespace memledger {

inline int64_t first_difference(const Tensor& a, const Tensor& b) {
  const std::span<const std::byte> pa = a.bytes(), pb = b.bytes();
  if (pa.size() != pb.size()) return 0;
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i] != pb[i]) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace memledger
