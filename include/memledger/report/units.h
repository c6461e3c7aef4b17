// Human units for text output (exact bytes stay in JSON): "8.75 KiB", "6.44 MiB", "512 B".
#pragma once

#include <cstdint>
#include <string>

namespace memledger {

std::string human_bytes(int64_t bytes);

}  // namespace memledger
