// Axis roles in an ONNX file: ONNX's standard dimension denotations on a value's shape
// (DATA_BATCH, DATA_CHANNEL, DATA_FEATURE), so that a model memledger writes keeps the
// roles it was planned with, and a model whose author denoted its axes states them.
// DATA_FEATURE does not say which spatial axis it is: the last feature axis reads as W,
// the one before as H. Export writes H and W only where that reading gives them back.
#pragma once

#include <string>
#include <vector>

#include "memledger/core/axis_role.h"

namespace memledger::onnx_io {

// One denotation per axis ("" where the role is unknown or would not read back).
std::vector<std::string> denotations_from_roles(const AxisRoles& roles);

// Roles from denotations; unknown roles for axes without one, and all unknown when the
// denotations repeat DATA_BATCH or DATA_CHANNEL (an inconsistent file states nothing).
AxisRoles roles_from_denotations(const std::vector<std::string>& denotations);

}  // namespace memledger::onnx_io
