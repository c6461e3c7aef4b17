#include "memledger/core/shape.h"

#include <algorithm>

#include "memledger/core/checked.h"

namespace memledger {

int64_t element_count(const Shape& shape, std::string_view what) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    if (extent < 0) fail("{}: negative extent {} in shape {}", what, extent, shape_to_string(shape));
    count = checked_mul(count, extent, what);
  }
  return count;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) text += ',';
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view what) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t ea = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t eb = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (ea != eb && ea != 1 && eb != 1)
      fail("{}: shapes {} and {} do not broadcast (axis {}: {} vs {})", what, shape_to_string(a), shape_to_string(b), i,
           ea, eb);
    out[i] = ea == 1 ? eb : ea;
  }
  return out;
}

}  // namespace memledger
