#include "memledger/report/units.h"

#include <fmt/format.h>

#include <cstdlib>

namespace memledger {

std::string human_bytes(int64_t bytes) {
  const double magnitude = static_cast<double>(std::llabs(bytes));
  if (magnitude < 1024) return fmt::format("{} B", bytes);
  if (magnitude < 1024.0 * 1024) return fmt::format("{:.2f} KiB", static_cast<double>(bytes) / 1024);
  if (magnitude < 1024.0 * 1024 * 1024) return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

}  // namespace memledger
