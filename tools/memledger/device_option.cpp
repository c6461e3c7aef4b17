#include "device_option.h"

#include "flag_errors.h"

namespace memledger::cli {

DeviceProfile device_from_flag(const std::string& device) {
  return parse_flag("--device", [&] { return resolve_device(device); });
}

void protect_device_file(OutputSet& outputs, const std::string& device) {
  for (const auto& name : builtin_profile_names())
    if (name == device) return;
  outputs.protect_input(device);
}

}  // namespace memledger::cli
