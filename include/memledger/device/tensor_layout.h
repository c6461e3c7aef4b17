// How a device profile stores one tensor: which dtype (the profile's storage or the
// model's), which physical order (the channel axis innermost under NHWC), and the
// alignment rules. Everything that needs a tensor's bytes under a device asks here.
#pragma once

#include "memledger/core/axis_role.h"
#include "memledger/core/dtype.h"
#include "memledger/core/layout.h"
#include "memledger/device/profile.h"

namespace memledger {

// The dtype a tensor of `model_dtype` has on the device.
DType storage_dtype(const DeviceProfile& profile, DType model_dtype);

// The physical order of a tensor with these roles: logical (ONNX) order, except that under
// NHWC a stated channel axis moves innermost. Unknown roles keep the logical order: the
// channel axis is never guessed (P2).
std::vector<int> physical_order(const DeviceProfile& profile, const AxisRoles& roles);

Layout tensor_layout(const DeviceProfile& profile, const Shape& shape, DType model_dtype, const AxisRoles& roles);

}  // namespace memledger
