// [[banks]] in a device profile: parsed strictly, the built-in boards' maps, round trips.
#include <gtest/gtest.h>

#include "memledger/core/error.h"
#include "memledger/device/profile.h"

namespace memledger {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_device_profile(text, "dev.toml");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "";
}

constexpr const char* kTwoBanks = R"(name = "two"
alignment_bytes = 4
constants = "external"

[[banks]]
name = "tcm"
capacity_bytes = 1024
holds = ["activations", "workspaces"]

[[banks]]
name = "psram"
capacity_bytes = 65536
alignment_bytes = 32
bytes_per_cycle = 0.25
holds = ["activations", "inputs"]

[[banks]]
name = "flash"
capacity_bytes = 4096
access_cost = 6
read_only = true
)";

TEST(DeviceBanks, ParsesEveryField) {
  const DeviceProfile p = parse_device_profile(kTwoBanks, "dev.toml");
  ASSERT_EQ(p.banks.size(), 3u);
  EXPECT_EQ(p.banks[0].name, "tcm");
  EXPECT_EQ(p.banks[0].capacity_bytes, 1024);
  EXPECT_EQ(p.banks[0].alignment_bytes, 4);  // the profile's, when the bank gives none
  EXPECT_DOUBLE_EQ(p.banks[0].access_cost, 1.0);
  EXPECT_EQ(p.banks[0].holds, kHoldsActivations | kHoldsWorkspaces);
  EXPECT_EQ(p.banks[1].alignment_bytes, 32);
  EXPECT_DOUBLE_EQ(p.banks[1].access_cost, 4.0);  // 1 / bytes_per_cycle
  EXPECT_EQ(p.banks[1].holds, kHoldsActivations | kHoldsInputs);
  EXPECT_TRUE(p.banks[2].read_only);
  EXPECT_EQ(p.banks[2].holds, kHoldsConstants);
  EXPECT_DOUBLE_EQ(p.banks[2].access_cost, 6.0);
  // What one-arena stages see: the first bank that holds activations.
  EXPECT_EQ(p.capacity_bytes, 1024);
  EXPECT_NE(describe_profile(p).find("bank psram: 65536 B, alignment 32 B, access cost 4, holds activations, inputs"),
            std::string::npos);
  const DeviceProfile again = parse_device_profile(to_toml(p), "again.toml");
  EXPECT_EQ(to_toml(again), to_toml(p));
  ASSERT_EQ(again.banks.size(), 3u);
  EXPECT_DOUBLE_EQ(again.banks[1].access_cost, 4.0);
  EXPECT_DOUBLE_EQ(p.cycles_per_mac, 1.0);  // the default
  const DeviceProfile fast = parse_device_profile(std::string("cycles_per_mac = 0.25\n") + kTwoBanks, "dev.toml");
  EXPECT_DOUBLE_EQ(fast.cycles_per_mac, 0.25);
  EXPECT_DOUBLE_EQ(parse_device_profile(to_toml(fast), "again.toml").cycles_per_mac, 0.25);
  EXPECT_NE(describe_profile(fast).find("0.25 cycles per MAC"), std::string::npos);
}

TEST(DeviceBanks, StrictValidationNamesTheKey) {
  const std::string head = "name = \"x\"\n";
  EXPECT_EQ(parse_error(head + "[[banks]]\nname = \"a\"\n"),
            "dev.toml:2: missing required key 'banks[0].capacity_bytes' (bank 'a')");
  EXPECT_EQ(parse_error(head + "[[banks]]\ncapacity_bytes = 8\n"), "dev.toml:2: missing required key 'banks[0].name'");
  EXPECT_NE(parse_error(head + "[[banks]]\nname = \"a\"\ncapacity_bytes = 8\n[[banks]]\nname = \"a\"\n"
                               "capacity_bytes = 8\n")
                .find("dev.toml:6: key 'banks[1].name': a second bank named 'a'"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "[[banks]]\nname = \"a\"\ncapacity_bytes = 8\nholds = [\"weights\"]\n")
                .find("key 'banks[0].holds': 'weights' is not one of: activations, workspaces, constants, inputs"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "[[banks]]\nname = \"a\"\ncapacity_bytes = 8\nkind = \"sram\"\n")
                .find("dev.toml:5: unknown key 'banks[0].kind'"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "[[banks]]\nname = \"a\"\ncapacity_bytes = 0\n")
                .find("key 'banks[0].capacity_bytes': 0 is out of range"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "[[banks]]\nname = \"a\"\ncapacity_bytes = 8\nalignment_bytes = 3\n")
                .find("key 'banks[0].alignment_bytes': 3 is not a power of two"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "[[banks]]\nname = \"a\"\ncapacity_bytes = 8\naccess_cost = 2\nbytes_per_cycle = 1\n")
                .find("key 'banks[0].bytes_per_cycle': give access_cost or bytes_per_cycle, not both"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "[[banks]]\nname = \"a\"\ncapacity_bytes = 8\naccess_cost = 0\n")
                .find("key 'banks[0].access_cost': 0 must be greater than zero"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "capacity_bytes = 8\n[[banks]]\nname = \"a\"\ncapacity_bytes = 8\n")
                .find("dev.toml:2: key 'capacity_bytes': a profile with [[banks]] gives each bank its capacity_bytes"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "[[banks]]\nname = \"f\"\ncapacity_bytes = 8\nread_only = true\n")
                .find("key 'banks': no bank holds activations"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "[[banks]]\nname = \"f\"\ncapacity_bytes = 8\nread_only = true\nholds = [\"inputs\"]\n")
                .find("key 'banks[0].holds': a read-only bank holds only constants"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "banks = 3\n").find("key 'banks': expected tables [[banks]]"), std::string::npos);
  EXPECT_NE(parse_error(head + "cycles_per_mac = 0\n").find("key 'cycles_per_mac': 0 must be greater than zero"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "cycles_per_mac = \"fast\"\n").find("key 'cycles_per_mac'"), std::string::npos);
}

// The boards' maps as their reference manuals give them (see builtin_profiles.cpp).
TEST(DeviceBanks, BuiltinBoards) {
  const auto total = [](const DeviceProfile& p, bool read_only) {
    int64_t sum = 0;
    for (const MemoryBank& b : p.banks)
      if (b.read_only == read_only) sum += b.capacity_bytes;
    return sum;
  };
  const DeviceProfile h7 = builtin_profile("stm32h743");
  EXPECT_EQ(h7.banks.size(), 8u);
  EXPECT_EQ(total(h7, false), (128 + 512 + 128 + 128 + 32 + 64) * 1024);
  EXPECT_EQ(total(h7, true), (2 + 64) * 1024 * 1024);  // internal flash, the board's Quad-SPI flash
  EXPECT_EQ(h7.capacity_bytes, 128 * 1024);            // DTCM
  EXPECT_EQ(total(builtin_profile("stm32f746"), false), (64 + 240 + 16) * 1024);
  EXPECT_EQ(total(builtin_profile("rp2040"), false), 264 * 1024);
  EXPECT_EQ(total(builtin_profile("nrf52840"), false), 256 * 1024);
  const DeviceProfile esp = builtin_profile("esp32s3");
  ASSERT_EQ(esp.banks.size(), 3u);
  EXPECT_EQ(esp.banks[1].name, "psram");
  EXPECT_EQ(esp.banks[1].capacity_bytes, 8 * 1024 * 1024);
  EXPECT_GT(esp.banks[1].access_cost, esp.banks[0].access_cost);
  const DeviceProfile u55 = builtin_profile("ethos-u55");
  EXPECT_EQ(u55.banks[0].name, "sram");
  EXPECT_EQ(u55.alignment_bytes, 16);
  for (const auto& name : {"stm32h743", "stm32f746", "esp32s3", "rp2040", "nrf52840", "ethos-u55"}) {
    const DeviceProfile p = builtin_profile(name);
    EXPECT_EQ(p.constants, ConstantResidency::kExternal) << name;
    EXPECT_TRUE(p.banks.back().read_only) << name;  // weights in flash, read in place
    EXPECT_LT(p.cycles_per_mac, 10.0) << name;      // each board states its compute
  }
  EXPECT_DOUBLE_EQ(h7.cycles_per_mac, 0.5);                                   // SMLAD: two MACs a cycle
  EXPECT_LT(builtin_profile("ethos-u55").cycles_per_mac, h7.cycles_per_mac);  // an NPU
}

}  // namespace
}  // namespace memledger
