// Gemm and MatMul on float32, both through exec/gemm (no workspace: the GEMM reads its
// operands where they are, transposed operands included).
#include <cstring>

#include "gemm.h"
#include "kernel.h"
#include "strided.h"

namespace memledger::exec {
namespace {

// Y = alpha·A'·B' + beta·C, C broadcast to [M, N].
void gemm_op(KernelContext& ctx) {
  const InputView& a = ctx.in(0);
  const InputView& b = ctx.in(1);
  OutputView& y = ctx.out();
  if (a.rank() != 2 || b.rank() != 2) fail("node {}: Gemm needs 2-D A and B", ctx.node.label());
  const bool ta = ctx.node.int_attr("transA", 0) != 0, tb = ctx.node.int_attr("transB", 0) != 0;
  const float alpha = ctx.node.float_attr("alpha", 1.0f), beta = ctx.node.float_attr("beta", 1.0f);
  const int64_t M = ta ? a.shape[1] : a.shape[0], K = ta ? a.shape[0] : a.shape[1];
  const int64_t N = tb ? b.shape[0] : b.shape[1];
  if ((tb ? b.shape[1] : b.shape[0]) != K || y.shape != Shape{M, N})
    fail("node {}: Gemm shapes {} × {} → {} do not agree", ctx.node.label(), shape_to_string(a.shape),
         shape_to_string(b.shape), shape_to_string(y.shape));
  float* py = y.as<float>();
  gemm(M, N, K, a.as<float>(), ta ? 1 : K, ta ? M : 1, b.as<float>(), tb ? 1 : N, tb ? K : 1, py, N, false);
  if (alpha != 1.0f)
    for (int64_t i = 0; i < M * N; ++i) py[i] *= alpha;
  if (ctx.has_input(2) && beta != 0.0f) {
    const InputView& c = ctx.in(2);
    StridedLoop<2> loop(y.shape, {dense_strides(y.shape), broadcast_strides(c.shape, y.shape)});
    const float* pc = c.as<float>();
    loop.for_each_row([&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
      for (int64_t i = 0; i < n; ++i) py[off[0] + i] += beta * pc[off[1] + i * s[1]];
    });
  }
}

// NumPy matmul: 1-D operands gain a unit axis, leading axes broadcast.
void matmul(KernelContext& ctx) {
  Shape as = ctx.in(0).shape, bs = ctx.in(1).shape;
  if (as.empty() || bs.empty()) fail("node {}: MatMul of a scalar", ctx.node.label());
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K)
    fail("node {}: MatMul inner extents {} and {} differ", ctx.node.label(), K, bs[bs.size() - 2]);
  const Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  const Shape batch = broadcast_shapes(abatch, bbatch, ctx.node.label());
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  if (ctx.out().elements() != batches * M * N) fail("node {}: MatMul output has the wrong size", ctx.node.label());
  const std::vector<int64_t> astr = broadcast_strides(abatch, batch), bstr = broadcast_strides(bbatch, batch);
  const float* pa = ctx.in(0).as<float>();
  const float* pb = ctx.in(1).as<float>();
  float* py = ctx.out().as<float>();
  std::vector<int64_t> index(batch.size(), 0);
  for (int64_t t = 0; t < batches; ++t) {
    int64_t ao = 0, bo = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      ao += index[i] * astr[i];
      bo += index[i] * bstr[i];
    }
    gemm(M, N, K, pa + ao * M * K, K, 1, pb + bo * K * N, N, 1, py + t * M * N, N, false);
    for (size_t i = batch.size(); i-- > 0;) {
      if (++index[i] < batch[i]) break;
      index[i] = 0;
    }
  }
}

}  // namespace

void add_matmul_kernels(KernelTable& t) {
  t.emplace_back(":Gemm", Kernel{
                              .check =
                                  [](const Graph& g, const Node& n) {
                                    return check_float_inputs(g, n, {0, 1, 2});
                                  },
                              .run = gemm_op,
                          });
  t.emplace_back(":MatMul", Kernel{
                                .check =
                                    [](const Graph& g, const Node& n) {
                                      return check_float_inputs(g, n, {0, 1});
                                    },
                                .run = matmul,
                            });
}

}  // namespace memledger::exec
