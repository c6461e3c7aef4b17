#include "memledger/teaching/example.h"

#include "memledger/device/tensor_layout.h"

namespace memledger::teaching {

Shape input_shape() { return {1, 12, 20, 28}; }
AxisRoles input_roles() { return {AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW}; }
DType model_dtype() { return DType::kFloat32; }

LayoutFigures layout_figures(const DeviceProfile& profile) {
  const Shape x = input_shape();
  const AxisRoles roles = input_roles();
  const Shape per_channel{1, x[1], 1, 1};
  const Shape one_channel{x[0], 1, x[2], x[3]};

  DeviceProfile row_rule = profile;
  row_rule.unit_inner_merge = true;
  DeviceProfile pixel_rule = profile;
  pixel_rule.unit_inner_merge = false;
  DeviceProfile int4 = row_rule;
  int4.storage = DType::kInt4;
  DeviceProfile int4_per_element = row_rule;  // the naive estimate: round each element to a byte
  int4_per_element.storage = DType::kInt8;
  DeviceProfile int4_full = profile;
  int4_full.storage = DType::kInt4;

  const int64_t compact = element_count(per_channel);
  const int64_t expanded = element_count(x);
  return LayoutFigures{
      .parameter_elements_compact = 2 * compact,
      .parameter_elements_expanded = 2 * expanded,
      .x = tensor_layout(profile, x, model_dtype(), roles),
      .parameter_compact = tensor_layout(profile, per_channel, model_dtype(), roles),
      .parameter_expanded = tensor_layout(profile, x, model_dtype(), roles),
      .c1_row_rule = tensor_layout(row_rule, one_channel, model_dtype(), roles),
      .c1_pixel_rule = tensor_layout(pixel_rule, one_channel, model_dtype(), roles),
      .int4_c1_packed = tensor_layout(int4, one_channel, model_dtype(), roles),
      .int4_c1_per_element = tensor_layout(int4_per_element, one_channel, model_dtype(), roles),
      .int4_c12 = tensor_layout(int4_full, x, model_dtype(), roles),
  };
}

}  // namespace memledger::teaching
