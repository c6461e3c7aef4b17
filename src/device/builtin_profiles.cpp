// The profiles compiled into the program, written as the TOML a user would write and read
// through the same parser as a user's file.
#include <array>
#include <string_view>

#include "memledger/core/error.h"
#include "memledger/device/profile.h"

namespace memledger {
namespace {

// The seed article's device: int8 storage, 16-byte aligned channel vectors (NHWC), a row
// of W when C = 1, 32 KiB of local memory in front of a larger external memory.
constexpr std::string_view kTeaching = R"(name = "teaching"
capacity_bytes = 32768
alignment_bytes = 16
layout = "NHWC"
aligned_run = "inner"
unit_inner_merge = true
storage = "int8"
constants = "just_in_time"

[dma]
granularity_bytes = 16
setup_cycles = 32
bytes_per_cycle = 8
external_bytes = 16777216
double_buffering = false
)";

// A host CPU: the model's own dtypes, NCHW, only tensor bases aligned (64 bytes),
// unlimited memory, weights resident for the whole program.
constexpr std::string_view kHost = R"(name = "host"
capacity_bytes = 0
alignment_bytes = 64
layout = "NCHW"
aligned_run = "tensor"
unit_inner_merge = false
storage = "model"
constants = "resident"
)";

// A microcontroller: 256 KiB of SRAM for the arena, int8 tensors stored dense in NHWC
// with 4-byte aligned bases (as TFLite Micro and TinyEngine lay them out), weights in
// flash and the input image in its own buffer (a camera frame), both outside the arena.
constexpr std::string_view kMcu = R"(name = "mcu"
capacity_bytes = 262144
alignment_bytes = 4
layout = "NHWC"
aligned_run = "tensor"
unit_inner_merge = false
storage = "int8"
constants = "external"
inputs = "external"
)";

struct Builtin {
  std::string_view name;
  std::string_view toml;
};
constexpr std::array<Builtin, 3> kBuiltins{{{"teaching", kTeaching}, {"host", kHost}, {"mcu", kMcu}}};

}  // namespace

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  for (const auto& b : kBuiltins) names.emplace_back(b.name);
  return names;
}

DeviceProfile builtin_profile(std::string_view name) {
  for (const auto& b : kBuiltins) {
    if (b.name != name) continue;
    DeviceProfile profile = parse_device_profile(b.toml, "built-in profile '" + std::string(name) + "'");
    profile.source = "built-in";
    return profile;
  }
  fail("unknown built-in device profile '{}' (known: teaching, host, mcu)", name);
}

}  // namespace memledger
