// The fast kernels on several threads (issue 38, item 3): the same outputs as on one thread
// (bit for bit where the kernels give it, within a float tolerance otherwise: a kernel may
// split a sum across threads), and a run inside the arena planned for those threads, with
// their declared workspaces, bit-identical to the ordinary run on as many threads.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "corpus.h"
#include "exec/fast/parallel.h"
#include "exec/fast/prepared_node.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/compare.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

// `integer`: every kernel's sums are exact integers, so two threads must give one thread's bits.
void expect_threads_agree(const Graph& g, const std::string& name, bool integer = false) {
  SCOPED_TRACE(name);
  const std::vector<Tensor> inputs = random_inputs(g, 7);
  const ExecOptions one{.kernels = KernelSet::kFast, .threads = 1};
  const ExecOptions two{.kernels = KernelSet::kFast, .threads = 2};
  const std::vector<Tensor> single = run_graph(g, inputs, {.kernels = KernelSet::kFast, .threads = 1});
  Executor executor(g, two);
  const std::vector<Tensor> multi = executor.run(inputs);
  ASSERT_EQ(single.size(), multi.size());
  int identical = 0;
  for (size_t i = 0; i < single.size(); ++i) {
    const TensorDifference exact = compare_tensors(multi[i], single[i], 0, 0);
    identical += exact.mismatches == 0 && exact.same_shape;
    EXPECT_EQ(compare_tensors(multi[i], single[i], 1e-5, 1e-6).mismatches, 0) << exact.describe();
    if (integer) {
      EXPECT_EQ(exact.mismatches, 0) << exact.describe();
    }
  }
  // The plan of the two-thread kernels' contracts, and a run inside it.
  const DeviceProfile host = builtin_profile("host");
  const MemoryPlan plan_two = plan_for_kernels(executor, host);
  const MemoryPlan plan_one = plan_for_kernels(g, host, one);
  const ArenaRunReport run = run_in_arena(executor, g, plan_two, inputs, multi);
  EXPECT_TRUE(run.clean()) << run.failure;
  EXPECT_TRUE(run.differing_outputs.empty());
  std::printf("%s: two threads %s one; arena %lld B (one thread's plan: %lld B)\n", name.c_str(),
              identical == static_cast<int>(single.size()) ? "bit-identical to" : "within 1e-5 of",
              static_cast<long long>(plan_two.arena_bytes), static_cast<long long>(plan_one.arena_bytes));
}

TEST(FastThreads, TwoThreadsGiveOneThreadsOutputsAndRunInTheirArena) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  for (const char* name : {"resnet18", "mobilenet_v2", "efficientnet_b0"}) {
    const std::filesystem::path model = dir / (std::string(name) + ".onnx");
    if (!std::filesystem::exists(model)) ML_SKIP_OR_FAIL("no " + model.string());
    expect_threads_agree(import_onnx_file(model.string()), name);
  }
}

// The split the own loops use: every element in exactly one range, ranges on grain bounds, as
// many as the threads allow and the grains fill.
TEST(FastThreads, ParallelRangesCoverEachElementOnce) {
  for (const int threads : {1, 2, 3}) {
    exec::fast::set_threads(threads);
    for (const int64_t count : {0, 1, 100, 4096, 4097, 100000}) {
      for (const int64_t grain : {1, 64, 4096}) {
        std::vector<int> seen(static_cast<size_t>(count), 0);
        std::vector<int> used(4, 0);
        exec::fast::parallel_ranges(count, grain, [&](int64_t begin, int64_t end, int thread) {
          EXPECT_EQ(begin % grain, 0);
          EXPECT_TRUE(end == count || end % grain == 0);
          used[static_cast<size_t>(thread)] = 1;
          for (int64_t i = begin; i < end; ++i) ++seen[static_cast<size_t>(i)];
        });
        for (int64_t i = 0; i < count; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)], 1) << count << " " << grain;
        const int expected = exec::fast::loop_threads(count, grain);
        EXPECT_EQ(expected, count < 2 * grain ? 1 : std::min<int64_t>(threads, count / grain));
        int ran = 0;
        for (const int u : used) ran += u;
        EXPECT_EQ(ran, count == 0 ? 0 : expected) << threads << " " << count << " " << grain;
      }
    }
  }
  exec::fast::set_threads(1);
}

// The int8 models: their elementwise, pooling and quantizing nodes run on the fast set's own
// loops (exec/fast/parallel.h), split across the threads; under the AVX2 cap their Convs too
// (the exact f32 Conv's conversions and requantization, per-thread rows in the workspace).
TEST(FastThreads, Int8ModelsGiveOneThreadsIntegersOnTwo) {
  const char* env = std::getenv("MEMLEDGER_CORPUS_INT8_DIR");
  const std::filesystem::path dir =
      env && *env ? std::filesystem::path(env) : std::filesystem::path(MEMLEDGER_BINARY_DIR) / "corpus-int8";
  for (const char* name : {"mobilenet_v2", "efficientnet_b0"}) {
    const std::filesystem::path model = dir / (std::string(name) + ".int8.onnx");
    if (!std::filesystem::exists(model)) ML_SKIP_OR_FAIL("no " + model.string());
    expect_threads_agree(import_onnx_file(model.string()), std::string(name) + ".int8", /*integer=*/true);
  }
}

}  // namespace
}  // namespace memledger
