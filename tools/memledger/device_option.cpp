#include "device_option.h"

#include <fmt/format.h>

namespace memledger::cli {

std::string describe_device(const DeviceProfile& p) {
  return fmt::format("{} ({}): capacity {}, alignment {} B, {}, aligned run = {}{}, storage {}, constants {}{}", p.name,
                     p.source, p.unlimited() ? std::string("unlimited") : fmt::format("{} B", p.capacity_bytes),
                     p.alignment_bytes, to_string(p.layout), to_string(p.aligned_run),
                     p.unit_inner_merge ? " (unit_inner_merge)" : "", p.storage ? dtype_name(*p.storage) : "model",
                     to_string(p.constants), p.inputs == InputResidency::kExternal ? ", inputs external" : "");
}

}  // namespace memledger::cli
