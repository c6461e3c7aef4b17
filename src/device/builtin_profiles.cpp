// The profiles compiled into the program, written as the TOML a user would write and read
// through the same parser as a user's file.
#include <fmt/format.h>

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

// Memory maps of real boards ([[banks]]). Capacities and addresses are the vendors'
// reference manuals'; access costs are relative cycles per byte for a CPU load or store
// (1 = the core's tightly-coupled or single-cycle SRAM), estimated from the wait states and
// bus widths those manuals give, not measured. Every map keeps weights in flash, read in
// place (execute-in-place), and the camera frame in its own buffer.

// STM32H743 (ST RM0433 rev 8, §2.3 "Memory organization" and Table 7; DS12110): Cortex-M7 at
// 480 MHz. DTCM 128 KiB at 0x20000000 (zero wait states); AXI SRAM 512 KiB at 0x24000000
// (D1 domain, 64-bit AXI, behind the L1 cache); SRAM1 128 KiB at 0x30000000, SRAM2 128 KiB
// at 0x30020000, SRAM3 32 KiB at 0x30040000 (D2 domain, AHB); SRAM4 64 KiB at 0x38000000
// (D3 domain); 2 MiB flash at 0x08000000 (4 wait states at 480 MHz, RM0433 Table 17). Beside
// it the board's Quad-SPI NOR flash, memory-mapped at 0x90000000 (RM0433 §23.3.6): 64 MiB as
// one MT25QL512 of the STM32H743I-EVAL (UM2198), 4 bits a clock at up to 133 MHz, about 7 core
// cycles a byte at 480 MHz without the cache: the weights the internal flash cannot hold
// (resnet18's 11 MB) are read from there in place.
// cycles_per_mac 0.5: int8 kernels as CMSIS-NN writes them issue SMLAD, two 16-bit MACs a
// cycle on the Cortex-M7 (Arm Cortex-M7 TRM, DSP extension), before loads and overheads.
constexpr std::string_view kStm32h743 = R"(name = "stm32h743"
alignment_bytes = 4
layout = "NHWC"
aligned_run = "tensor"
storage = "int8"
constants = "external"
inputs = "external"
cycles_per_mac = 0.5

[[banks]]
name = "dtcm"
capacity_bytes = 131072
access_cost = 1
holds = ["activations", "workspaces"]

[[banks]]
name = "axi_sram"
capacity_bytes = 524288
access_cost = 2
holds = ["activations", "workspaces"]

[[banks]]
name = "sram1"
capacity_bytes = 131072
access_cost = 3
holds = ["activations", "workspaces"]

[[banks]]
name = "sram2"
capacity_bytes = 131072
access_cost = 3
holds = ["activations", "workspaces"]

[[banks]]
name = "sram3"
capacity_bytes = 32768
access_cost = 3
holds = ["activations", "workspaces"]

[[banks]]
name = "sram4"
capacity_bytes = 65536
access_cost = 4
holds = ["activations", "workspaces"]

[[banks]]
name = "flash"
capacity_bytes = 2097152
access_cost = 5
read_only = true

[[banks]]
name = "qspi_flash"
capacity_bytes = 67108864
access_cost = 8
read_only = true
)";

// STM32F746 (ST RM0385 rev 8, §2.2 "Memory organization"; DS10916): Cortex-M7 at 216 MHz.
// DTCM 64 KiB at 0x20000000 (zero wait states); SRAM1 240 KiB at 0x20010000 and SRAM2 16 KiB
// at 0x2004C000 (AXI/AHB bus matrix); 1 MiB flash at 0x08000000 (7 wait states at 216 MHz,
// RM0385 Table 5, hidden in part by the ART accelerator).
// cycles_per_mac 0.5: the Cortex-M7's SMLAD, as on the STM32H743.
constexpr std::string_view kStm32f746 = R"(name = "stm32f746"
alignment_bytes = 4
layout = "NHWC"
aligned_run = "tensor"
storage = "int8"
constants = "external"
inputs = "external"
cycles_per_mac = 0.5

[[banks]]
name = "dtcm"
capacity_bytes = 65536
access_cost = 1
holds = ["activations", "workspaces"]

[[banks]]
name = "sram1"
capacity_bytes = 245760
access_cost = 2
holds = ["activations", "workspaces"]

[[banks]]
name = "sram2"
capacity_bytes = 16384
access_cost = 2
holds = ["activations", "workspaces"]

[[banks]]
name = "flash"
capacity_bytes = 1048576
access_cost = 4
read_only = true
)";

// ESP32-S3 with 8 MiB of octal PSRAM (the ESP32-S3-WROOM-1-N8R8 module; Espressif ESP32-S3
// Technical Reference Manual v1.x, chapter 4 "System and Memory"; ESP-IDF's "Support for
// External RAM" guide): 512 KiB internal SRAM (SRAM0 32 KiB, SRAM1 416 KiB, SRAM2 64 KiB), of
// which about 320 KiB is left for data once ESP-IDF's instruction RAM, caches and heap take
// theirs; PSRAM through the 32 KiB data cache over octal SPI at 80 MHz (roughly 8x slower
// than internal SRAM on a miss); 8 MiB flash, read through the same cache.
// cycles_per_mac 0.125: the Xtensa LX7's PIE vector unit multiplies 16 int8 lanes per
// instruction (ESP32-S3 TRM, chapter 1 "Processor Instruction Extensions"); ESP-NN's kernels
// reach about half of that.
constexpr std::string_view kEsp32s3 = R"(name = "esp32s3"
alignment_bytes = 4
layout = "NHWC"
aligned_run = "tensor"
storage = "int8"
constants = "external"
inputs = "external"
cycles_per_mac = 0.125

[[banks]]
name = "sram"
capacity_bytes = 327680
access_cost = 1
holds = ["activations", "workspaces"]

[[banks]]
name = "psram"
capacity_bytes = 8388608
alignment_bytes = 16
access_cost = 8
holds = ["activations", "workspaces"]

[[banks]]
name = "flash"
capacity_bytes = 8388608
access_cost = 8
read_only = true
)";

// RP2040 (Raspberry Pi RP2040 Datasheet, §2.6 "Memory"): dual Cortex-M0+ at 133 MHz. 264 KiB
// SRAM in six banks: SRAM0-3 (4 x 64 KiB) striped word by word at 0x20000000, SRAM4 and SRAM5
// (4 KiB each, 0x20040000 and 0x20041000) for per-core stacks; all single-cycle. Flash is
// external QSPI (2 MiB on the Pico) read through a 16 KiB XIP cache.
// cycles_per_mac 4: the Cortex-M0+ has no DSP extension; a MAC is a load pair, a 1-cycle
// MULS and an add (RP2040 datasheet §2.4, single-cycle multiplier).
constexpr std::string_view kRp2040 = R"(name = "rp2040"
alignment_bytes = 4
layout = "NHWC"
aligned_run = "tensor"
storage = "int8"
constants = "external"
inputs = "external"
cycles_per_mac = 4

[[banks]]
name = "sram_striped"
capacity_bytes = 262144
access_cost = 1
holds = ["activations", "workspaces"]

[[banks]]
name = "sram4"
capacity_bytes = 4096
access_cost = 1
holds = ["activations", "workspaces"]

[[banks]]
name = "sram5"
capacity_bytes = 4096
access_cost = 1
holds = ["activations", "workspaces"]

[[banks]]
name = "flash"
capacity_bytes = 2097152
access_cost = 10
read_only = true
)";

// nRF52840 (Nordic nRF52840 Product Specification v1.7, §4.2 "Memory"): Cortex-M4F at 64
// MHz, 256 KiB RAM at 0x20000000 (RAM0-RAM7: 8 x 8 KiB; RAM8: 6 x 32 KiB), 1 MiB flash at
// 0x00000000 (code from flash through the instruction cache; data reads at wait states).
// cycles_per_mac 0.5: the Cortex-M4F's SMLAD, two 16-bit MACs a cycle.
constexpr std::string_view kNrf52840 = R"(name = "nrf52840"
alignment_bytes = 4
layout = "NHWC"
aligned_run = "tensor"
storage = "int8"
constants = "external"
inputs = "external"
cycles_per_mac = 0.5

[[banks]]
name = "ram"
capacity_bytes = 262144
access_cost = 1
holds = ["activations", "workspaces"]

[[banks]]
name = "flash"
capacity_bytes = 1048576
access_cost = 3
read_only = true
)";

// An Ethos-U55 system in Vela's Shared_Sram memory mode (Arm Ethos-U Vela, vela.ini system
// configuration Ethos_U55_High_End_Embedded; Arm Corstone-300 reference design): the tensor
// arena in on-chip SRAM (2 MiB, 16-byte aligned as the NPU's DMA wants), weights in off-chip
// flash read by the NPU in place at an eighth of SRAM's clock (OffChipFlash_clock_scale =
// 0.125), and DRAM beside them for what does not fit SRAM.
// cycles_per_mac 1/128: the Ethos-U55-128 configuration (128 int8 MACs a cycle, Arm
// Ethos-U55 TRM); Vela's High_End_Embedded system uses it.
constexpr std::string_view kEthosU55 = R"(name = "ethos-u55"
alignment_bytes = 16
layout = "NHWC"
aligned_run = "tensor"
storage = "int8"
constants = "external"
inputs = "external"
cycles_per_mac = 0.0078125

[[banks]]
name = "sram"
capacity_bytes = 2097152
access_cost = 1
holds = ["activations", "workspaces"]

[[banks]]
name = "dram"
capacity_bytes = 67108864
access_cost = 4
holds = ["activations", "workspaces"]

[[banks]]
name = "flash"
capacity_bytes = 33554432
access_cost = 8
read_only = true
)";

struct Builtin {
  std::string_view name;
  std::string_view toml;
};
constexpr std::array<Builtin, 9> kBuiltins{{{"teaching", kTeaching},
                                            {"host", kHost},
                                            {"mcu", kMcu},
                                            {"stm32h743", kStm32h743},
                                            {"stm32f746", kStm32f746},
                                            {"esp32s3", kEsp32s3},
                                            {"rp2040", kRp2040},
                                            {"nrf52840", kNrf52840},
                                            {"ethos-u55", kEthosU55}}};

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
  fail("unknown built-in device profile '{}' (known: {})", name, fmt::join(builtin_profile_names(), ", "));
}

}  // namespace memledger
