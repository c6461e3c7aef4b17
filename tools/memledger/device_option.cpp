#include "device_option.h"

namespace memledger::cli {

void protect_device_file(OutputSet& outputs, const std::string& device) {
  for (const auto& name : builtin_profile_names())
    if (name == device) return;
  outputs.protect_input(device);
}

}  // namespace memledger::cli
