// Uses the installed library: the teaching input's physical size under the teaching device.
#include <cstdio>

#include "memledger/device/profile.h"
#include "memledger/device/tensor_layout.h"

int main() {
  const auto profile = memledger::builtin_profile("teaching");
  const auto layout = memledger::tensor_layout(
      profile, {1, 12, 20, 28}, memledger::DType::kInt8,
      {memledger::AxisRole::kN, memledger::AxisRole::kC, memledger::AxisRole::kH, memledger::AxisRole::kW});
  std::printf("x physical %lld bytes\n", static_cast<long long>(layout.bytes()));
  return 0;
}
