// The integer Gemm and MatMul (QLinearMatMul / QGemm semantics): int8 or uint8 A (per
// tensor) and B (per tensor, or per output column: Gemm's B along axis 0 when transB, else
// axis 1; MatMul's B along its last axis), an optional int32 bias C of N values (Gemm,
// scale s_a·s_b[n]); every output sums C[n] + Σ_k (a − z_a)(b − z_b[n]) in int32 and is
// requantized by the graph's rule with s_a·s_b[n]/s_y. No workspace; alpha and beta must
// be 1 (the quantizer never writes others).
#include <algorithm>

#include "kernel.h"
#include "quantized.h"

namespace memledger::exec {
namespace {

struct MatrixOperands {
  int64_t M, N, K;
  // Element (i, k) of A at a_rs·i + a_cs·k; (k, j) of B at b_rs·k + b_cs·j.
  int64_t a_rs, a_cs, b_rs, b_cs;
};

template <typename A, typename B, typename Y>
void integer_gemm(const MatrixOperands& s, const A* a, int32_t za, const B* b, const std::vector<int32_t>& zb,
                  const int32_t* bias, const Requantizer& rq, Y* y) {
  for (int64_t i = 0; i < s.M; ++i)
    for (int64_t j = 0; j < s.N; ++j) {
      int32_t acc = bias ? bias[j] : 0;
      const int32_t zbj = zb[static_cast<size_t>(j)];
      for (int64_t k = 0; k < s.K; ++k)
        acc += (static_cast<int32_t>(a[i * s.a_rs + k * s.a_cs]) - za) *
               (static_cast<int32_t>(b[k * s.b_rs + j * s.b_cs]) - zbj);
      y[i * s.N + j] = static_cast<Y>(rq(acc, static_cast<size_t>(j)));
    }
}

// Zero points (one per column) and the requantizer of A·B → Y.
std::pair<std::vector<int32_t>, Requantizer> column_quant(const KernelContext& ctx, int64_t N) {
  const Quantization& aq = input_quant(ctx, 0);
  const Quantization& bq = input_quant(ctx, 1);
  const Quantization& yq = output_quant(ctx);
  std::vector<double> multipliers;
  std::vector<int32_t> zb;
  for (int64_t j = 0; j < (bq.scales.size() == 1 ? 1 : N); ++j) {
    multipliers.push_back(real_multiplier(ctx.graph.requantization, aq.scale(), bq.scale(j), yq.scale()));
    zb.push_back(static_cast<int32_t>(bq.zero_point(j)));
  }
  if (zb.size() == 1) zb.assign(static_cast<size_t>(N), zb[0]);
  return {zb, Requantizer(ctx.graph.requantization, multipliers, static_cast<int32_t>(yq.zero_point()),
                          quant_range(ctx.outputs[0].dtype))};
}

template <typename F>
void with_abc(KernelContext& ctx, F&& f) {
  with_8bit_type(ctx.in(0).dtype, [&](auto at) {
    with_8bit_type(ctx.in(1).dtype, [&](auto bt) { with_8bit_type(ctx.out().dtype, [&](auto yt) { f(at, bt, yt); }); });
  });
}

void gemm(KernelContext& ctx) {
  const InputView& a = ctx.in(0);
  const InputView& b = ctx.in(1);
  const bool ta = ctx.node.int_attr("transA", 0) != 0, tb = ctx.node.int_attr("transB", 0) != 0;
  const int64_t M = ta ? a.shape[1] : a.shape[0], K = ta ? a.shape[0] : a.shape[1];
  const int64_t N = tb ? b.shape[0] : b.shape[1];
  if ((tb ? b.shape[1] : b.shape[0]) != K || ctx.out().shape != Shape{M, N})
    fail("node {}: Gemm shapes {} × {} do not agree", ctx.node.label(), shape_to_string(a.shape),
         shape_to_string(b.shape));
  const int32_t* bias = nullptr;
  if (ctx.has_input(2)) {
    if (ctx.in(2).elements() != N)
      fail("node {}: an integer Gemm's C has {} values, not {}", ctx.node.label(), ctx.in(2).elements(), N);
    bias = ctx.in(2).as<int32_t>();
  }
  const MatrixOperands s{M, N, K, ta ? 1 : K, ta ? M : 1, tb ? 1 : N, tb ? K : 1};
  const auto [zb, rq] = column_quant(ctx, N);
  const int32_t za = static_cast<int32_t>(input_quant(ctx, 0).zero_point());
  with_abc(ctx, [&](auto at, auto bt, auto yt) {
    using A = decltype(at);
    using B = decltype(bt);
    using Y = decltype(yt);
    integer_gemm<A, B, Y>(s, a.as<A>(), za, b.as<B>(), zb, bias, rq, ctx.out().as<Y>());
  });
}

// A [..., M, K] times a 2-D B [K, N], or equal leading axes on both.
void matmul(KernelContext& ctx) {
  Shape as = ctx.in(0).shape, bs = ctx.in(1).shape;
  if (as.size() < 2 || bs.size() < 2) fail("node {}: an integer MatMul needs operands of rank ≥ 2", ctx.node.label());
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K)
    fail("node {}: MatMul inner extents {} and {} differ", ctx.node.label(), K, bs[bs.size() - 2]);
  int64_t batches = 1;
  for (size_t i = 0; i + 2 < as.size(); ++i) batches *= as[i];
  const bool b_batched = bs.size() > 2;
  if (b_batched && !std::equal(as.begin(), as.end() - 2, bs.begin(), bs.end() - 2))
    fail("node {}: an integer MatMul broadcasts B's leading axes", ctx.node.label());
  const auto [zb, rq] = column_quant(ctx, N);
  const int32_t za = static_cast<int32_t>(input_quant(ctx, 0).zero_point());
  const MatrixOperands s{M, N, K, K, 1, N, 1};
  with_abc(ctx, [&](auto at, auto bt, auto yt) {
    using A = decltype(at);
    using B = decltype(bt);
    using Y = decltype(yt);
    for (int64_t t = 0; t < batches; ++t)
      integer_gemm<A, B, Y>(s, ctx.in(0).as<A>() + t * M * K, za, ctx.in(1).as<B>() + (b_batched ? t * K * N : 0), zb,
                            nullptr, rq, ctx.out().as<Y>() + t * M * N);
  });
}

std::string check_bias(const Graph& g, const Node& n, size_t index) {
  if (n.inputs.size() <= index || !n.inputs[index].valid()) return {};
  const Value& c = g.value(n.inputs[index]);
  if (c.dtype != DType::kInt32)
    return fmt::format("input {} (C '{}') is {}, not int32", index, c.name, dtype_name(c.dtype));
  return {};
}

std::string check_gemm(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2) return "an integer Gemm needs A and B";
  const Shape& b = g.value(n.inputs[1]).shape;
  if (g.value(n.inputs[0]).shape.size() != 2 || b.size() != 2) return "an integer Gemm needs 2-D A and B";
  if (n.float_attr("alpha", 1.0f) != 1.0f || n.float_attr("beta", 1.0f) != 1.0f)
    return "an integer Gemm with alpha or beta other than 1";
  const bool tb = n.int_attr("transB", 0) != 0;
  for (auto why :
       {check_quantized_operand(g, n, 0, false), check_quantized_operand(g, n, 1, false, tb ? b[0] : b[1], tb ? 0 : 1),
        check_quantized_operand(g, n, 0, true), check_bias(g, n, 2)})
    if (!why.empty()) return why;
  return {};
}

std::string check_matmul(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2) return "an integer MatMul needs A and B";
  const Shape& b = g.value(n.inputs[1]).shape;
  if (b.size() < 2 || g.value(n.inputs[0]).shape.size() < 2) return "an integer MatMul needs operands of rank ≥ 2";
  for (auto why : {check_quantized_operand(g, n, 0, false),
                   check_quantized_operand(g, n, 1, false, b.back(), static_cast<int>(b.size()) - 1),
                   check_quantized_operand(g, n, 0, true)})
    if (!why.empty()) return why;
  return {};
}

}  // namespace

void add_quantized_matmul_kernels(KernelTable& t) {
  t.emplace_back(":Gemm", Kernel{.check = check_gemm, .run = gemm});
  t.emplace_back(":MatMul", Kernel{.check = check_matmul, .run = matmul});
}

}  // namespace memledger::exec
