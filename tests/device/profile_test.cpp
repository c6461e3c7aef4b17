#include "memledger/device/profile.h"

#include <gtest/gtest.h>

#include "memledger/core/error.h"
#include "memledger/device/tensor_layout.h"

namespace memledger {
namespace {

// The message of the Error that `f` throws, or "" when it does not throw.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "";
}

std::string parse_error(const std::string& text) {
  return error_of([&] { parse_device_profile(text, "dev.toml"); });
}

TEST(DeviceProfile, BuiltinsHaveTheDesignedRules) {
  const DeviceProfile teaching = builtin_profile("teaching");
  EXPECT_EQ(teaching.capacity_bytes, 32768);
  EXPECT_EQ(teaching.alignment_bytes, 16);
  EXPECT_EQ(teaching.layout, ActivationLayout::kNHWC);
  EXPECT_EQ(teaching.aligned_run, AlignedRun::kInner);
  EXPECT_TRUE(teaching.unit_inner_merge);
  EXPECT_EQ(teaching.storage, DType::kInt8);
  EXPECT_EQ(teaching.source, "built-in");
  const DeviceProfile host = builtin_profile("host");
  EXPECT_TRUE(host.unlimited());
  EXPECT_EQ(host.alignment_bytes, 64);
  EXPECT_EQ(host.layout, ActivationLayout::kNCHW);
  EXPECT_EQ(host.aligned_run, AlignedRun::kTensor);
  EXPECT_FALSE(host.storage.has_value());
  EXPECT_EQ(host.inputs, InputResidency::kArena);
  EXPECT_NE(error_of([] { builtin_profile("nope"); }).find("teaching, host, mcu"), std::string::npos);
  // The MCU of issue 13: 256 KiB, int8, NHWC, 4-byte alignment, weights and input outside.
  const DeviceProfile mcu = builtin_profile("mcu");
  EXPECT_EQ(mcu.capacity_bytes, 262144);
  EXPECT_EQ(mcu.storage, DType::kInt8);
  EXPECT_EQ(mcu.layout, ActivationLayout::kNHWC);
  EXPECT_EQ(mcu.alignment_bytes, 4);
  EXPECT_EQ(mcu.constants, ConstantResidency::kExternal);
  EXPECT_EQ(mcu.inputs, InputResidency::kExternal);
}

TEST(DeviceProfile, ReadsExternalConstantsAndInputs) {
  const DeviceProfile p = load_device_profile_file(MEMLEDGER_SOURCE_DIR "/tests/data/device/mcu_flash.toml");
  EXPECT_EQ(p.name, "mcu320k");
  EXPECT_EQ(p.capacity_bytes, 327680);
  EXPECT_EQ(p.constants, ConstantResidency::kExternal);
  EXPECT_EQ(p.inputs, InputResidency::kExternal);
  EXPECT_NE(to_toml(p).find("constants = \"external\"\ninputs = \"external\""), std::string::npos);
  EXPECT_EQ(parse_device_profile("name = \"x\"\ninputs = \"arena\"\n", "x.toml").inputs, InputResidency::kArena);
}

TEST(DeviceProfile, ReadsEveryFieldOfAFile) {
  const DeviceProfile p = load_device_profile_file(MEMLEDGER_SOURCE_DIR "/tests/data/device/npu.toml");
  EXPECT_EQ(p.name, "npu-256k");
  EXPECT_EQ(p.capacity_bytes, 262144);
  EXPECT_EQ(p.alignment_bytes, 32);
  EXPECT_FALSE(p.unit_inner_merge);
  EXPECT_EQ(p.constants, ConstantResidency::kResident);
  EXPECT_EQ(p.dma.granularity_bytes, 64);
  EXPECT_EQ(p.dma.setup_cycles, 100);
  EXPECT_DOUBLE_EQ(p.dma.bytes_per_cycle, 16.0);
  EXPECT_EQ(p.dma.external_bytes, 67108864);
  EXPECT_TRUE(p.dma.double_buffering);
}

TEST(DeviceProfile, TomlTextRoundTrips) {
  for (const auto& name : builtin_profile_names()) {
    DeviceProfile p = builtin_profile(name);
    DeviceProfile again = parse_device_profile(to_toml(p), "again.toml");
    EXPECT_EQ(to_toml(again), to_toml(p)) << name;
  }
}

TEST(DeviceProfile, StrictValidationNamesKeyAndLine) {
  EXPECT_EQ(parse_error("name = \"x\"\ncapcity_bytes = 3\n"),
            "dev.toml:2: unknown key 'capcity_bytes' (known: name, "
            "capacity_bytes, alignment_bytes, layout, aligned_run, "
            "unit_inner_merge, storage, constants, inputs, cycles_per_mac, [dma], [ops.NAME], [[banks]])");
  EXPECT_NE(parse_error("name = \"x\"\nconstants = \"flash\"\n")
                .find("dev.toml:2: key 'constants': 'flash' is not one of: just_in_time, resident, external"),
            std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\ninputs = \"dma\"\n")
                .find("dev.toml:2: key 'inputs': 'dma' is not one of: arena, external"),
            std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\ninputs = true\n").find("key 'inputs': expected a string"), std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\n\nalignment_bytes = \"16\"\n")
                .find("dev.toml:3: key 'alignment_bytes': expected an integer, got a string"),
            std::string::npos);
  EXPECT_NE(
      parse_error("name = \"x\"\ncapacity_bytes = -1\n").find("dev.toml:2: key 'capacity_bytes': -1 is out of range"),
      std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\nalignment_bytes = 0\n").find("key 'alignment_bytes'"), std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\nalignment_bytes = 24\n").find("24 is not a power of two"), std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\nlayout = \"NWHC\"\n").find("'NWHC' is not one of: NCHW, NHWC"),
            std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\nstorage = \"int3\"\n").find("key 'storage'"), std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\nunit_inner_merge = 1\n").find("expected true or false"), std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\n[dma]\ngranularity_bytes = 0\n").find("dev.toml:3: key 'dma.granularity_bytes'"),
            std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\n[dma]\nbytes_per_cycle = 0.0\n").find("must be greater than zero"),
            std::string::npos);
  EXPECT_NE(parse_error("name = \"x\"\n[dma]\nburst = 4\n").find("dev.toml:3: unknown key 'dma.burst'"),
            std::string::npos);
  EXPECT_EQ(parse_error("capacity_bytes = 1\n"), "dev.toml: missing required key 'name'");
  EXPECT_NE(parse_error("name = \n").find("dev.toml:1: not valid TOML"), std::string::npos);
}

TEST(DeviceProfile, ResolveNamesBuiltinOrFile) {
  EXPECT_EQ(resolve_device("teaching").name, "teaching");
  EXPECT_EQ(resolve_device(MEMLEDGER_SOURCE_DIR "/tests/data/device/npu.toml").name, "npu-256k");
  EXPECT_NE(error_of([] { resolve_device("no-such-device.toml"); }).find("not a built-in profile"), std::string::npos);
}

TEST(TensorLayout, ChannelGoesInnermostOnlyWhenStated) {
  const DeviceProfile teaching = builtin_profile("teaching");
  const AxisRoles nchw{AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW};
  EXPECT_EQ(physical_order(teaching, nchw), (std::vector<int>{0, 2, 3, 1}));
  EXPECT_EQ(physical_order(teaching, unknown_roles(4)), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(physical_order(builtin_profile("host"), nchw), (std::vector<int>{0, 1, 2, 3}));
  const Layout x = tensor_layout(teaching, {1, 12, 20, 28}, DType::kFloat32, nchw);
  EXPECT_EQ(x.element_bits(), 8);  // storage = int8 overrides the model's float32
  EXPECT_EQ(x.bytes(), 8960);
  const Layout host = tensor_layout(builtin_profile("host"), {1, 12, 20, 28}, DType::kFloat32, nchw);
  EXPECT_EQ(host.element_bits(), 32);
  EXPECT_EQ(host.bytes(), 26880);
}

}  // namespace
}  // namespace memledger
