// The teaching example of DESIGN.md §5, built through the library: an input
// x[N,C,H,W] = [1,12,20,28] and a per-channel affine y = x·scale[c] + bias[c]. Every figure
// the demo prints comes from these layouts, under whatever device profile is chosen.
#pragma once

#include <cstdint>

#include "memledger/core/layout.h"
#include "memledger/core/shape.h"
#include "memledger/device/profile.h"

namespace memledger::teaching {

// The example's input shape and its (stated, never guessed) axis roles.
Shape input_shape();
AxisRoles input_roles();
// The dtype of the example as a model file holds it.
DType model_dtype();

// The layouts behind each figure of DESIGN.md §5's table.
struct LayoutFigures {
  int64_t parameter_elements_compact;   // scale + bias, one per channel each: 2·C
  int64_t parameter_elements_expanded;  // both stored at the input's shape: 2·N·C·H·W
  Layout x;                             // the input (and the output) under the device
  Layout parameter_compact;             // scale (or bias) as [1,C,1,1]
  Layout parameter_expanded;            // scale (or bias) stored at the input's shape
  Layout c1_row_rule;                   // x with C = 1, unit inner axis merged: rows of W
  Layout c1_pixel_rule;                 // x with C = 1, one aligned pixel per element
  Layout int4_c1_packed;                // C = 1 in int4, bits counted before rounding
  Layout int4_c1_per_element;           // C = 1 in int4, each element rounded to a byte
  Layout int4_c12;                      // the full input in int4
};

LayoutFigures layout_figures(const DeviceProfile& profile);

}  // namespace memledger::teaching
