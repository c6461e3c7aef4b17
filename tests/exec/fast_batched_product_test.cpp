// The fast set's batched product (exec/fast/batched_product.h): the reference product batch by
// batch, its bits on any number of threads; and a MatMul of two activations with batch axes runs
// fast on every ISA (oneDNN's matmul on AVX-512, this loop below it), inside its arena too.
#include <gtest/gtest.h>

#include "exec/fast/batched_product.h"
#include "exec/fast/isa.h"
#include "exec/fast/prepared_node.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/compare.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using testing::ramp;

// y = MatMul(a, b) of two graph inputs.
Graph matmul_graph(const Shape& a, const Shape& b, const Shape& y) {
  Graph g;
  const ValueId av = g.add_input({.name = "a", .dtype = DType::kFloat32, .shape = a});
  const ValueId bv = g.add_input({.name = "b", .dtype = DType::kFloat32, .shape = b});
  const ValueId yv = g.add_value({.name = "y", .shape = y});
  g.add_node({.name = "ab", .op = "MatMul", .inputs = {av, bv}, .outputs = {yv}});
  g.mark_output(yv);
  return g;
}

// a [2,3,37,21] against b [2,1,21,45] (b's batch axis 1 broadcast): the reference MatMul's bits,
// on one thread and on two.
TEST(FastBatchedProduct, IsTheReferenceProductBatchByBatch) {
  const Graph g = matmul_graph({2, 3, 37, 21}, {2, 1, 21, 45}, {2, 3, 37, 45});
  const std::vector<Tensor> inputs{ramp({2, 3, 37, 21}, -1.3f, 0.0173f, 151), ramp({2, 1, 21, 45}, -0.9f, 0.0131f, 97)};
  const Tensor want = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  for (int threads : {1, 2}) {
    std::vector<float> got(want.elements(), -1.0f);
    exec::fast::set_threads(threads);
    exec::fast::batched_product({{2, 3, 37, 21}, {2, 1, 21, 45}, {2, 3, 37, 45}}, inputs[0].data<float>().data(),
                                inputs[1].data<float>().data(), got.data());
    for (int64_t i = 0; i < want.elements(); ++i) ASSERT_EQ(got[i], want.data<float>()[i]) << threads << ": " << i;
  }
  exec::fast::set_threads(1);
}

// Q·Kᵀ of an attention: two activations, batched over heads.
TEST(FastBatchedProduct, AMatMulOfTwoActivationsRunsFastOnEveryIsa) {
  const Graph g = matmul_graph({1, 4, 19, 8}, {1, 4, 8, 19}, {1, 4, 19, 19});
  const std::vector<Tensor> inputs{ramp({1, 4, 19, 8}, -1.0f, 0.031f, 77), ramp({1, 4, 8, 19}, -0.8f, 0.027f, 61)};
  const Tensor want = run_graph(g, inputs, {.kernels = KernelSet::kReference}).at(0);
  const ExecOptions one{.kernels = KernelSet::kFast, .threads = 1};
  Executor fast(g, one);
  ASSERT_EQ(fast.fast_node_count(), 1) << fast.summary();
  const bool own = exec::fast::effective_isa() != exec::fast::Isa::kAvx512;  // else oneDNN's brgemm matmul
  EXPECT_EQ(fast.fast_kernel_of(g.order().at(0)).find("batched product (memledger") != std::string::npos, own)
      << fast.fast_kernel_of(g.order().at(0));
  const Tensor got = fast.run(inputs).at(0);
  EXPECT_EQ(compare_tensors(got, want, 1e-5, 1e-6).mismatches, 0);
  Executor two(g, {.kernels = KernelSet::kFast, .threads = 2});
  const Tensor got2 = two.run(inputs).at(0);
  EXPECT_EQ(compare_tensors(got2, got, 0, 0).mismatches, 0);
  const ArenaRunReport r = run_in_arena(g, plan_for_kernels(g, builtin_profile("host"), one), inputs, one);
  EXPECT_TRUE(r.clean()) << (r.differing_outputs.empty() ? r.failure : r.differing_outputs[0]);
}

}  // namespace
}  // namespace memledger
