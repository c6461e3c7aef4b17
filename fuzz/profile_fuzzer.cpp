// libFuzzer target for device profiles (TOML): any text must parse into a profile whose
// fields are in range, or be refused with a memledger::Error naming the key and line.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memledger/core/error.h"
#include "memledger/device/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const memledger::DeviceProfile p =
        memledger::parse_device_profile(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.toml");
    // What a profile promises its users: ranges that keep every figure inside 64 bits.
    if (p.capacity_bytes < 0 || p.alignment_bytes < 1 || p.dma.granularity_bytes < 1 || p.dma.setup_cycles < 0 ||
        !(p.dma.bytes_per_cycle > 0) || p.dma.external_bytes < 0)
      __builtin_trap();
    (void)memledger::to_toml(p);
  } catch (const memledger::Error&) {
  }
  return 0;
}
