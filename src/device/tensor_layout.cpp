#include "memledger/device/tensor_layout.h"

namespace memledger {

DType storage_dtype(const DeviceProfile& profile, DType model_dtype) { return profile.storage.value_or(model_dtype); }

std::vector<int> physical_order(const DeviceProfile& profile, const AxisRoles& roles) {
  std::vector<int> order;
  const auto channel = find_role(roles, AxisRole::kC);
  for (int axis = 0; axis < static_cast<int>(roles.size()); ++axis)
    if (profile.layout == ActivationLayout::kNCHW || !channel || axis != *channel) order.push_back(axis);
  if (profile.layout == ActivationLayout::kNHWC && channel) order.push_back(*channel);
  return order;
}

Layout tensor_layout(const DeviceProfile& profile, const Shape& shape, DType model_dtype, const AxisRoles& roles) {
  const AxisRoles stated = roles.empty() ? unknown_roles(shape.size()) : roles;
  return Layout(shape, dtype_bits(storage_dtype(profile, model_dtype)), stated, physical_order(profile, stated),
                profile.layout_rules());
}

}  // namespace memledger
