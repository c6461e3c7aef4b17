// Checks of quantization parameters as a model file states them (DESIGN.md §9, issue 35
// item 7), shared by the readers: a scale must be finite and > 0, a zero point must lie in
// the quantized value's type (0 for int32), and per-axis parameters need one entry per index
// of the axis. A failure is an Error naming `where` (the node) and the field.
#pragma once

#include <cstdint>
#include <string>

#include "memledger/core/dtype.h"
#include "memledger/core/shape.h"
#include "memledger/ir/quantization.h"

namespace memledger {

// The integers a quantized value of `type` holds: int8 [-128, 127], uint8 [0, 255] ...
struct IntegerRange {
  int64_t min = 0;
  int64_t max = 0;
};
// An Error for a type that cannot hold quantized integers (float, bool, int64).
IntegerRange integer_range(DType type, const std::string& where);

// Checks `q` for a value of `type` and `shape`; `scale_field` and `zero_point_field` name
// the inputs the parameters came from ("x_scale 'conv1.s'").
void check_quantization(const Quantization& q, DType type, const Shape& shape, const std::string& where,
                        const std::string& scale_field, const std::string& zero_point_field);

// "s=0.0235 zp=-12" or "per-axis[0] 32 scales": a value's quantization for people.
std::string describe_quantization(const Quantization& q);

}  // namespace memledger
