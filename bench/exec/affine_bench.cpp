// The per-channel affine kernel y = x·scale[c] + bias[c] on [1,C,H,W] float32 with
// [1,C,1,1] parameters (read through zero strides, never expanded), against a
// single-thread memcpy of the same bytes measured alternately in the same iterations.
// Counters: affine and memcpy bandwidth (GB/s, read + write) and their ratio (target ≥ 0.8,
// DESIGN.md §8). Sizes run from L2-resident to well past L3.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "exec/kernel.h"
#include "memledger/core/tensor.h"
#include "memledger/ir/affine.h"

namespace memledger {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void BM_AffineVsMemcpy(benchmark::State& state) {
  const int64_t C = 64, H = state.range(0), W = state.range(0);
  const AxisRoles nchw{AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW};
  Graph g;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, C, H, W}, .roles = nchw});
  Tensor scale(DType::kFloat32, {1, C, 1, 1}), bias(DType::kFloat32, {1, C, 1, 1});
  for (int64_t c = 0; c < C; ++c) {
    scale.data<float>()[c] = 1.0f + 0.01f * static_cast<float>(c);
    bias.data<float>()[c] = 0.5f - 0.01f * static_cast<float>(c);
  }
  const ValueId s = g.add_constant("scale", scale, nchw), b = g.add_constant("bias", bias, nchw);
  add_affine(g, x, s, b, AffineRule::kCurrent, "affine");
  const Node& node = g.node(g.order().at(0));
  const exec::Kernel* kernel = exec::find_kernel(node);

  const int64_t elements = C * H * W;
  std::vector<float> in(static_cast<size_t>(elements), 1.5f), out(static_cast<size_t>(elements), 0.0f);
  exec::KernelContext ctx{.graph = g, .node = node, .inputs = {}, .outputs = {}, .workspace = {}};
  ctx.inputs = {{DType::kFloat32, {1, C, H, W}, reinterpret_cast<const std::byte*>(in.data())},
                {DType::kFloat32, {1, C, 1, 1}, scale.bytes().data()},
                {DType::kFloat32, {1, C, 1, 1}, bias.bytes().data()}};
  ctx.outputs = {{DType::kFloat32, {1, C, H, W}, reinterpret_cast<std::byte*>(out.data())}};
  const size_t bytes = static_cast<size_t>(elements) * sizeof(float);

  std::vector<double> affine_s, memcpy_s;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    kernel->run(ctx);
    benchmark::ClobberMemory();
    const auto t1 = Clock::now();
    std::memcpy(out.data(), in.data(), bytes);
    benchmark::ClobberMemory();
    const auto t2 = Clock::now();
    const double a = std::chrono::duration<double>(t1 - t0).count();
    affine_s.push_back(a);
    memcpy_s.push_back(std::chrono::duration<double>(t2 - t1).count());
    state.SetIterationTime(a);
  }
  const double moved = 2.0 * static_cast<double>(bytes) / 1e9;  // read x + write y
  const double affine_gbps = moved / median(affine_s), memcpy_gbps = moved / median(memcpy_s);
  state.counters["MiB"] = static_cast<double>(bytes) / (1 << 20);
  state.counters["affine_GBps"] = affine_gbps;
  state.counters["memcpy_GBps"] = memcpy_gbps;
  state.counters["ratio"] = affine_gbps / memcpy_gbps;
}
// H = W: 32 → 256 KiB (L2), 64 → 1 MiB, 128 → 4 MiB, 256 → 16 MiB, 512 → 64 MiB (past L3).
BENCHMARK(BM_AffineVsMemcpy)
    ->Arg(32)
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->Arg(512)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace memledger

BENCHMARK_MAIN();
