// `--device NAME|FILE`, the same on every command that plans for a device.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "memledger/core/output_file.h"
#include "memledger/device/profile.h"

namespace memledger::cli {

inline void add_device_option(CLI::App* command, std::string& device, const std::string& default_name) {
  device = default_name;
  command->add_option("--device", device, "device profile: a built-in name (teaching, host, mcu) or a TOML file")
      ->capture_default_str();
}

// The profile `--device` names; an Error naming the flag when there is none or its file is bad.
DeviceProfile device_from_flag(const std::string& device);

// Protects the profile file `--device` names (not a built-in name) from being an output.
void protect_device_file(OutputSet& outputs, const std::string& device);

}  // namespace memledger::cli
