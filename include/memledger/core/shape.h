// Static tensor shapes: extents outer to inner in ONNX's logical order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

using Shape = std::vector<int64_t>;

// Product of the extents; an extent below zero or a product that overflows is a user
// error naming `what`.
int64_t element_count(const Shape& shape, std::string_view what = "shape");

// "[1,12,20,28]"; "[]" for a scalar.
std::string shape_to_string(const Shape& shape);

// NumPy / ONNX multidirectional broadcasting of two shapes; a user error naming `what`
// when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view what = "broadcast");

}  // namespace memledger
