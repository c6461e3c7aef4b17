// NPU mode on cases small enough to check by hand. The teaching profile: int8, NHWC,
// 16-byte aligned pixels, 32 KiB local memory, DMA granularity 16 B, 32 setup cycles per
// transfer, 8 B/cycle, no double buffering. The teaching x = [1,12,20,28] is 8960 bytes
// (560 pixels × 16 B, rows of 28 × 16 = 448 B); a compact [1,12,1,1] parameter is 16 B,
// an expanded one 8960 B. Cycles = transfers × 32 + bytes / 8.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "memledger/device/profile.h"
#include "memledger/plan/allocate/validate.h"
#include "memledger/sim/sim_report.h"
#include "memledger/sim/simulate.h"
#include "memledger/teaching/variants.h"

namespace memledger::sim {
namespace {

const TensorTraffic& tensor(const OperatorSim& s, const std::string& name) {
  for (const auto& t : s.tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

void expect_valid_local_plans(const SimReport& r) {
  for (const auto& s : r.operators) {
    EXPECT_FALSE(allocate::find_violation(s.local, s.local_plan).has_value()) << s.node;
    if (s.fits) {
      EXPECT_LE(s.local_peak_bytes, r.device.capacity_bytes) << s.node;
    }
  }
}

Graph variant(char letter) {
  for (auto& v : teaching::affine_variants())
    if (v.letter == letter) return std::move(v.graph);
  throw std::runtime_error("no variant");
}

TEST(Simulate, CompactParametersWholeTensorsFit) {
  // Variant B: x 8960 + scale 16 + bias 16, y written over x's tile (the tile is a copy,
  // so in-place is legal in local memory even though x is the caller's): 8992 B local.
  // Loads: x 1 × 8960, scale 1 × 16, bias 1 × 16; store: y 1 × 8960.
  // 17952 B in 4 transfers: 4 × 32 + 17952 / 8 = 128 + 2244 = 2372 cycles = the ideal.
  const SimReport r = simulate(variant('B'), builtin_profile("teaching"));
  ASSERT_EQ(r.operators.size(), 1u);
  const OperatorSim& s = r.operators[0];
  EXPECT_EQ(s.tiles, 1);
  EXPECT_EQ(s.local_peak_bytes, 8992);
  EXPECT_TRUE(tensor(s, "y").in_place);
  EXPECT_EQ(r.total().bytes, 17952);
  EXPECT_EQ(r.total().transfers, 4);
  EXPECT_DOUBLE_EQ(r.total().cycles, 2372);
  EXPECT_EQ(r.ideal.bytes, 17952);
  EXPECT_DOUBLE_EQ(r.bytes_ratio(), 1.0);
  EXPECT_DOUBLE_EQ(r.cycles_ratio(), 1.0);
  EXPECT_EQ(r.compact_parameters.bytes, 32);  // proportional to C: 2 × align_up(12, 16)
  EXPECT_EQ(r.expanded_parameters.bytes, 0);
  EXPECT_TRUE(r.fits());
  expect_valid_local_plans(r);
}

TEST(Simulate, ExpandedParametersAndHistoricalWorkspaceSplitRows) {
  // Variant A: x, scale, bias, y and the historical workspace are 5 × 8960 = 44800 B whole,
  // over 32768. Two tiles of 10 rows: 5 × 4480 = 22400 B fit.
  // Loads: x, scale, bias 2 × 4480 each (6 transfers, 26880 B); store y 2 × 4480.
  // 35840 B in 8 transfers: 8 × 32 + 35840 / 8 = 256 + 4480 = 4736 cycles.
  // Ideal: 4 tensors × 8960 = 35840 B in 4 transfers: 128 + 4480 = 4608 cycles.
  const SimReport r = simulate(variant('A'), builtin_profile("teaching"));
  const OperatorSim& s = r.operators.at(0);
  EXPECT_EQ(s.tiles, 2);
  EXPECT_EQ(s.tile_extents, (std::vector<int64_t>{1, 12, 10, 28}));
  EXPECT_EQ(s.workspace_bytes, 4480);
  EXPECT_EQ(s.local_peak_bytes, 22400);
  EXPECT_EQ(r.load.transfers, 6);
  EXPECT_EQ(r.load.bytes, 26880);
  EXPECT_EQ(r.store.transfers, 2);
  EXPECT_EQ(r.total().bytes, 35840);
  EXPECT_DOUBLE_EQ(r.total().cycles, 4736);
  EXPECT_DOUBLE_EQ(r.ideal.cycles, 4608);
  EXPECT_EQ(tensor(s, "scale").reuse, "per tile");
  // Expanded parameters: 2 × 8960 = 17920 B, proportional to N·C·H·W (560× the compact 32 B).
  EXPECT_EQ(r.expanded_parameters.bytes, 17920);
  EXPECT_EQ(r.compact_parameters.bytes, 0);
  expect_valid_local_plans(r);
}

DeviceProfile small_teaching(int64_t capacity, bool double_buffering) {
  DeviceProfile p = builtin_profile("teaching");
  p.capacity_bytes = capacity;
  p.dma.double_buffering = double_buffering;
  return p;
}

TEST(Simulate, CompactParametersReusedAcrossTiles) {
  // 4096 B local: a tile of th rows needs th × 448 (x, y over it) + 32 (scale, bias).
  // 10 rows: 4512 > 4096; 7 rows (ceil(20/3)): 3168 fits → tiles of 7, 7, 6 rows.
  // x: 3 loads (3136 + 3136 + 2688 = 8960 B); scale, bias once (16 B each); y: 3 stores.
  // 17952 B in 8 transfers: 8 × 32 + 2244 = 2500 cycles (ideal 2372: ×1.054).
  const SimReport r = simulate(variant('B'), small_teaching(4096, false));
  const OperatorSim& s = r.operators.at(0);
  EXPECT_EQ(s.tiles, 3);
  EXPECT_EQ(s.local_peak_bytes, 3168);
  EXPECT_EQ(tensor(s, "x").moves, 3);
  EXPECT_EQ(tensor(s, "scale").moves, 1);
  EXPECT_EQ(tensor(s, "scale").reuse, "once");
  EXPECT_EQ(r.compact_parameters.bytes, 32);
  EXPECT_EQ(r.total().bytes, 17952);
  EXPECT_EQ(r.total().transfers, 8);
  EXPECT_DOUBLE_EQ(r.total().cycles, 2500);
  expect_valid_local_plans(r);
}

TEST(Simulate, CompactParametersReloadedPerTile) {
  // The naive schedule reloads scale and bias with each of the 3 tiles: 6 × 16 = 96 B
  // instead of 32, 12 transfers: 12 × 32 + 18016 / 8 = 384 + 2252 = 2636 cycles.
  const SimReport r =
      simulate(variant('B'), small_teaching(4096, false), {.parameters = ParameterReuse::kReloadPerTile});
  EXPECT_EQ(r.operators.at(0).tiles, 3);
  EXPECT_EQ(r.compact_parameters.bytes, 96);
  EXPECT_EQ(r.compact_parameters.transfers, 6);
  EXPECT_EQ(r.total().bytes, 18016);
  EXPECT_DOUBLE_EQ(r.total().cycles, 2636);
}

TEST(Simulate, DoubleBufferingDoublesStreamedTiles) {
  // Two copies of the x tile (y written over each): 2 × th × 448 + 32 ≤ 4096 → th = 4,
  // 5 tiles of 4 rows (1792 B). Local: 1792 + 1792 + 16 + 16 = 3616 B.
  // 17952 B in 5 + 2 + 5 = 12 transfers: 12 × 32 + 2244 = 2628 cycles.
  const SimReport r = simulate(variant('B'), small_teaching(4096, true));
  const OperatorSim& s = r.operators.at(0);
  EXPECT_EQ(s.tiles, 5);
  EXPECT_EQ(tensor(s, "x").copies, 2);
  EXPECT_EQ(tensor(s, "scale").copies, 1);  // loaded once: nothing to overlap
  EXPECT_EQ(s.local_peak_bytes, 3616);
  EXPECT_EQ(s.local.buffers.size(), 4u);
  EXPECT_DOUBLE_EQ(r.total().cycles, 2628);
  expect_valid_local_plans(r);
}

// A depthwise 3×3 Conv, pad 1: x [1,16,8,8] (64 pixels × 16 B = 1024 B), weights
// [16,1,3,3] (unknown roles: 48 rows of kw = 3 → 16 B each = 768 B), y [1,16,8,8] 1024 B.
// No workspace (a depthwise Conv runs directly).
Graph depthwise() {
  Graph g;
  g.name = "depthwise";
  const AxisRoles nchw{AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW};
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, 16, 8, 8}, .roles = nchw});
  const ValueId w = g.add_constant("w", Tensor(DType::kFloat32, {16, 1, 3, 3}));
  const ValueId y = g.add_value({.name = "y", .dtype = DType::kFloat32, .shape = {1, 16, 8, 8}, .roles = nchw});
  Node n{.name = "dw", .op = "Conv", .inputs = {x, w}, .outputs = {y}};
  n.attributes["group"] = int64_t{16};
  n.attributes["kernel_shape"] = std::vector<int64_t>{3, 3};
  n.attributes["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  g.add_node(std::move(n));
  g.mark_output(y);
  return g;
}

TEST(Simulate, ConvRowTilesCarryTheirHalo) {
  // 1536 B local. The depthwise kernel writes y over x, channel by channel through a
  // workspace of one output plane (8 rows × 16 B = 128 B), so whole is 1024 + 768 + 128 =
  // 1920. Two tiles of 4 output rows read input rows [0,5) and [3,8): 5 rows × 8 × 16 = 640 B
  // each, y's 512 B tile over it, the workspace 64 B: local 640 + 768 + 64 = 1472.
  // Loads: x 2 × 640 (the halo: 256 B over the 1024), w once 768; store y 2 × 512.
  // 3072 B in 5 transfers: 5 × 32 + 3072 / 8 = 544 cycles; ideal 2816 B in 3: 96 + 352 = 448.
  const SimReport r = simulate(depthwise(), small_teaching(1536, false));
  const OperatorSim& s = r.operators.at(0);
  EXPECT_EQ(s.model, "conv");
  EXPECT_EQ(s.tiles, 2);
  EXPECT_EQ(tensor(s, "x").tile_bytes, 640);
  EXPECT_EQ(tensor(s, "x").traffic.bytes, 1280);
  EXPECT_EQ(tensor(s, "w").moves, 1);
  EXPECT_EQ(s.local_peak_bytes, 1472);
  EXPECT_EQ(r.total().bytes, 3072);
  EXPECT_DOUBLE_EQ(r.total().cycles, 544);
  EXPECT_DOUBLE_EQ(r.ideal.cycles, 448);
  EXPECT_NEAR(r.bytes_ratio(), 3072.0 / 2816.0, 1e-12);
  expect_valid_local_plans(r);
}

TEST(Simulate, RefusesAProfileWithoutExternalMemory) {
  EXPECT_THROW(simulate(variant('B'), builtin_profile("host")), Error);
}

TEST(SimReport, TextAndJsonCarryTheFigures) {
  const SimReport r = simulate(variant('A'), builtin_profile("teaching"));
  const std::string text = sim_report_text(r);
  EXPECT_NE(text.find("2 tiles of [1,12,10,28] (H 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("expanded 17920 B moved"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(sim_report_json(r));
  EXPECT_EQ(j["load"]["bytes"], 26880);
  EXPECT_EQ(j["parameter_traffic"]["expanded"]["bytes"], 17920);
  EXPECT_EQ(j["operators"][0]["tiles"], 2);
  EXPECT_EQ(j["operators"][0]["local_peak_bytes"], 22400);
}

}  // namespace
}  // namespace memledger::sim
