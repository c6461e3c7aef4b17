#include "device_option.h"

#include <fmt/format.h>

namespace memledger::cli {

void protect_device_file(OutputSet& outputs, const std::string& device) {
  for (const auto& name : builtin_profile_names())
    if (name == device) return;
  outputs.protect_input(device);
}

std::string describe_device(const DeviceProfile& p) {
  return fmt::format("{} ({}): capacity {}, alignment {} B, {}, aligned run = {}{}, storage {}, constants {}", p.name,
                     p.source, p.unlimited() ? std::string("unlimited") : fmt::format("{} B", p.capacity_bytes),
                     p.alignment_bytes, to_string(p.layout), to_string(p.aligned_run),
                     p.unit_inner_merge ? " (unit_inner_merge)" : "", p.storage ? dtype_name(*p.storage) : "model",
                     to_string(p.constants));
}

}  // namespace memledger::cli
