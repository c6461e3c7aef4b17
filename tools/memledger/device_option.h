// `--device NAME|FILE`, the same on every command that plans for a device.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "memledger/device/profile.h"

namespace memledger::cli {

inline void add_device_option(CLI::App* command, std::string& device, const std::string& default_name) {
  device = default_name;
  command->add_option("--device", device, "device profile: a built-in name (teaching, host) or a TOML file")
      ->capture_default_str();
}

}  // namespace memledger::cli
