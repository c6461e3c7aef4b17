// The fast kernels on several threads (issue 38, item 3): the same outputs as on one thread
// (bit for bit where the kernels give it, within a float tolerance otherwise: a kernel may
// split a sum across threads), and a run inside the arena planned for those threads, with
// their declared workspaces, bit-identical to the ordinary run on as many threads.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "corpus.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/compare.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

void expect_threads_agree(const Graph& g, const std::string& name) {
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

}  // namespace
}  // namespace memledger
