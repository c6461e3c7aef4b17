// Real int8 arena runs (issue 35, item 4) on a hand-made int8 network: a quantized model is
// planned in its own integer bytes under an int8 profile (no float shadow), `fit` on the MCU
// profile patches its leading stage, and the fitted plan runs inside an arena of exactly the
// planned bytes, bit-identical to the layer-by-layer heap run, every workspace used.
#include <gtest/gtest.h>

#include <random>

#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/fit/fit.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {
namespace {

Quantization per_tensor(float scale, int64_t zero_point) { return {.scales = {scale}, .zero_points = {zero_point}}; }

Tensor int8_codes(Shape shape, uint32_t seed, int lo = -127, int hi = 127) {
  Tensor t(DType::kInt8, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  for (int8_t& v : t.data<int8_t>()) v = static_cast<int8_t>(d(rng));
  return t;
}

// An int8 Conv (per-channel weights, int32 bias) from `x` with `maps` outputs.
ValueId conv(Graph& g, ValueId x, int64_t maps, int64_t k, int64_t stride, int64_t group, const std::string& name,
             uint32_t seed) {
  const Value& xv = g.value(x);
  const int64_t channels = xv.shape[1], pad = k / 2;
  const float x_scale = xv.quant->scale();
  const Shape out{xv.shape[0], maps, (xv.shape[2] + 2 * pad - k) / stride + 1,
                  (xv.shape[3] + 2 * pad - k) / stride + 1};
  Quantization wq{.scales = {}, .zero_points = {}, .axis = 0};
  Tensor bias(DType::kInt32, {maps});
  for (int64_t m = 0; m < maps; ++m) {
    wq.scales.push_back(0.004f + 0.0005f * static_cast<float>(m % 5));
    wq.zero_points.push_back(0);
    bias.data<int32_t>()[static_cast<size_t>(m)] = static_cast<int32_t>((m % 7) * 40 - 120);
  }
  const ValueId w = g.add_constant(name + ".w", int8_codes({maps, channels / group, k, k}, seed));
  g.value(w).quant = wq;
  const ValueId b = g.add_constant(name + ".b", bias);
  Quantization bq{.scales = {}, .zero_points = {}, .axis = 0};
  for (float s : wq.scales) {
    bq.scales.push_back(x_scale * s);
    bq.zero_points.push_back(0);
  }
  g.value(b).quant = bq;
  const ValueId y = g.add_value({.name = name, .dtype = DType::kInt8, .shape = out, .quant = per_tensor(0.05f, -3)});
  g.add_node({.name = name + ".conv",
              .op = "Conv",
              .inputs = {x, w, b},
              .outputs = {y},
              .attributes = {{"kernel_shape", std::vector<int64_t>{k, k}},
                             {"strides", std::vector<int64_t>{stride, stride}},
                             {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
                             {"group", group}}});
  return y;
}

// x [1,3,96,96] int8 → Conv s2 → HardSwish → depthwise → Conv 1×1 → Add (residual) → Conv s2
// → GlobalAveragePool, all int8.
Graph int8_network() {
  Graph g;
  const ValueId x =
      g.add_input({.name = "x", .dtype = DType::kInt8, .shape = {1, 3, 96, 96}, .quant = per_tensor(0.02f, 1)});
  const ValueId c1 = conv(g, x, 16, 3, 2, 1, "c1", 1);
  const ValueId a1 =
      g.add_value({.name = "a1", .dtype = DType::kInt8, .shape = g.value(c1).shape, .quant = per_tensor(0.03f, -40)});
  g.add_node({.name = "hswish", .op = "HardSwish", .inputs = {c1}, .outputs = {a1}});
  const ValueId d1 = conv(g, a1, 16, 3, 1, 16, "d1", 2);
  const ValueId p1 = conv(g, d1, 16, 1, 1, 1, "p1", 3);
  const ValueId r1 =
      g.add_value({.name = "r1", .dtype = DType::kInt8, .shape = g.value(p1).shape, .quant = per_tensor(0.06f, 0)});
  g.add_node({.name = "residual", .op = "Add", .inputs = {p1, a1}, .outputs = {r1}});
  const ValueId c2 = conv(g, r1, 24, 3, 2, 1, "c2", 4);
  const ValueId pooled =
      g.add_value({.name = "pooled", .dtype = DType::kInt8, .shape = {1, 24, 1, 1}, .quant = per_tensor(0.02f, 5)});
  g.add_node({.name = "gap", .op = "GlobalAveragePool", .inputs = {c2}, .outputs = {pooled}});
  g.mark_output(pooled);
  return g;
}

TEST(QuantizedArena, AQuantizedModelIsPlannedInItsOwnBytes) {
  const Graph g = int8_network();
  const DeviceProfile mcu = builtin_profile("mcu");
  ASSERT_TRUE(mcu.storage.has_value());
  const MemoryPlan under_int8 = plan_memory(g, mcu);
  const MemoryPlan own = plan_memory(g, with_model_dtypes(mcu));
  EXPECT_EQ(under_int8.ledger.peak_live_bytes, own.ledger.peak_live_bytes);
  EXPECT_EQ(under_int8.arena_bytes, own.arena_bytes);
  // Every activation counts one byte per element: c1 is 16·48·48.
  for (const LiveBuffer& b : under_int8.liveness.buffers)
    if (b.name == "c1") {
      EXPECT_EQ(b.logical_bytes, 16 * 48 * 48);
    }
  // A float model under the same profile is still planned at int8 (the float shadow).
  Graph f;
  const ValueId x = f.add_input({.name = "x", .shape = {1, 4, 8, 8}});
  const ValueId y = f.add_value({.name = "y", .shape = {1, 4, 8, 8}});
  f.add_node({.name = "relu", .op = "Relu", .inputs = {x}, .outputs = {y}});
  f.mark_output(y);
  for (const LiveBuffer& b : plan_memory(f, mcu).liveness.buffers)
    if (b.name == "y") {
      EXPECT_EQ(b.logical_bytes, 4 * 8 * 8);
    }
}

TEST(QuantizedArena, FitPatchesTheInt8NetworkAndItsPlanRunsBitIdentically) {
  const Graph g = int8_network();
  DeviceProfile mcu = builtin_profile("mcu");
  const MemoryPlan layer_by_layer = plan_memory(g, mcu);
  mcu.capacity_bytes = layer_by_layer.ledger.peak_live_bytes / 2;  // forces a patched stage
  const FitResult fit = fit_model(g, mcu);
  ASSERT_TRUE(fit.fits) << "peak " << fit.plan.ledger.peak_live_bytes << " capacity " << mcu.capacity_bytes;
  ASSERT_TRUE(fit.patches.has_value());
  EXPECT_GT(fit.patches->patched_macs, fit.patches->original_macs);

  const std::vector<Tensor> inputs{int8_codes({1, 3, 96, 96}, 17, -128, 127)};
  const std::vector<Tensor> heap = run_graph(g, inputs, {.kernels = KernelSet::kReference});
  // The fit's own plan, in the model's int8 bytes, against the layer-by-layer outputs.
  const ArenaRunReport r = run_in_arena(fit.graph, fit.plan, inputs, heap);
  std::string why = r.failure;
  for (const auto& v : r.violations) why += "\n" + v.message;
  for (const auto& o : r.differing_outputs) why += "\n" + o;
  EXPECT_TRUE(r.clean()) << why;
  EXPECT_TRUE(r.untouched_workspaces.empty());
  EXPECT_EQ(r.arena_bytes, fit.plan.arena_bytes);
  EXPECT_LE(r.arena_bytes, mcu.capacity_bytes);
  ASSERT_EQ(r.outputs.at(0).dtype(), DType::kInt8);
}

}  // namespace
}  // namespace memledger
