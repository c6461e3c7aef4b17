// The fast Gemm and MatMul: oneDNN's matmul (brgemm on AVX-512), or, where oneDNN has only
// gemm-based matmuls (below AVX-512: they pack through malloc, behind the plan's back), its
// 1×1 convolution over the rows (fast/isa.h), or for a batched product of two activations
// there the reference's product per batch on the run's threads (fast/batched_product.h).
#include <algorithm>
#include <functional>
#include <numeric>

#include "exec/fast/batched_product.h"
#include "exec/fast/kernel_common.h"

namespace memledger::exec::fast {
namespace {

// Constant weights up to this size run as a 1-D convolution below AVX-512 (add_matmul_as_conv):
// without prepacking they are reordered into the workspace on every run, which must not grow
// without bound (vgg16's first fc: 411 MB). The choice does not depend on prepacking (`run
// --arena` compares a run without it against one with it, bit for bit).
constexpr int64_t kConvProductWeightBytes = int64_t{16} << 20;

// y = a·b (+ bias) as a 1-D convolution with a one-wide window over the rows of a: a [rows, K]
// row-major is the convolution's source in nwc (a row is a position's K channels), y its
// destination, bᵀ [N, K] its weights. oneDNN 2.6 has only gemm-based matmuls below AVX-512,
// which pack through malloc (refused: the run must touch only its declared buffers); its AVX2
// 1×1 convolution is a JIT kernel with no allocation of its own (jit_1x1:avx2, weights in its
// blocked format: prepacked, or reordered into the workspace on every run).
void add_matmul_as_conv(DnnlNode& node, const memory& a, const memory& b, const memory& bias, const memory& y,
                        const dnnl::primitive_attr& attr, const Value* b_constant, const PrepareOptions& options) {
  const memory::desc ad = a.get_desc(), bd = b.get_desc(), yd = y.get_desc();
  const memory::dims adims = ad.dims(), bdims = bd.dims(), ydims = yd.dims();
  const size_t rank = bdims.size();
  if (rank < 2 || adims.size() != rank || ydims.size() != rank) not_fast("operand ranks differ");
  for (size_t i = 0; i + 2 < rank; ++i)
    if (bdims[i] != 1) not_fast("batched weights");
  if (!plain_strided(bd) || ad != plain_desc(adims, dt::f32) || yd != plain_desc(ydims, dt::f32))
    not_fast("operands not row-major");
  const int64_t K = bdims[rank - 2], N = bdims[rank - 1];
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= adims[i];
  if (adims[rank - 1] != K || ydims[rank - 1] != N || rows * N != static_cast<int64_t>(yd.get_size() / sizeof(float)))
    not_fast("operand extents");
  if (K * N * static_cast<int64_t>(sizeof(float)) > kConvProductWeightBytes)
    not_fast(fmt::format("weights of {} B, over the {} B a product as a convolution takes", K * N * sizeof(float),
                         kConvProductWeightBytes));
  // Gemm's alpha (matmul's output scale) as a linear post-op: the AVX2 1×1 convolution takes
  // no output scale. Where there is a bias, the scale would apply to it too: not that.
  dnnl::primitive_attr conv_attr = attr;
  int mask = 0;
  std::vector<float> scales;
  attr.get_output_scales(mask, scales);
  if (!scales.empty() && !(scales.size() == 1 && scales[0] == 1.0f)) {
    if (mask != 0 || scales.size() != 1 || bias || attr.get_post_ops().len() > 0)
      not_fast("a scaled product with a bias or post-ops");
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, algorithm::eltwise_linear, scales[0], 0.0f);
    conv_attr = user_scratchpad_attr();
    conv_attr.set_post_ops(ops);
  }
  const dnnl_dim_t* bs = bd.data.format_desc.blocking.strides;
  const memory src = node.alias(a, memory::desc({1, K, rows}, dt::f32, memory::dims{rows * K, 1, K}));
  const memory dst = node.alias(y, memory::desc({1, N, rows}, dt::f32, memory::dims{rows * N, 1, N}));
  const memory weights = node.alias(b, memory::desc({N, K, 1}, dt::f32, memory::dims{bs[rank - 1], bs[rank - 2], 1}));
  const memory conv_bias = bias ? node.alias(bias, plain_desc({N}, dt::f32)) : memory();
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm::convolution_direct,
                                             src.get_desc(), memory::desc({N, K, 1}, dt::f32, memory::format_tag::any),
                                             bias ? conv_bias.get_desc() : memory::desc(), dst.get_desc(), {1}, {0},
                                             {0}, {0});
  const auto pd = usable(dnnl::convolution_forward::primitive_desc(desc, conv_attr, cpu_engine()), /*allow_ref=*/false);
  const memory w = b_constant ? node.constant_reordered(weights, *b_constant->constant, pd.weights_desc(), options)
                              : node.reordered(weights, pd.weights_desc());
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, conv_bias);
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::convolution_forward(pd), std::move(args), std::string("matmul as conv ") + pd.impl_info_str());
}

}  // namespace

// y = x·W (+ bias) through oneDNN's matmul; operands given by their (possibly strided)
// descriptors over inputs 0 and 1. Where oneDNN has only a gemm-based matmul (below
// AVX-512), a 1-D convolution computes it (add_matmul_as_conv).
void add_matmul(DnnlNode& node, const memory& a, const memory& b, const memory& bias, const memory& y,
                const dnnl::primitive_attr& attr, const Value* b_constant, const PrepareOptions& options) {
  // Constant weights: oneDNN picks their format, and they are reordered into it once. Not
  // prepacking, they are used as they lie: a reorder on every run would need a workspace
  // as big as the weight (vgg's first fc: 411 MB) for a product that reads it once.
  const bool reorder_b = b_constant && options.prepack_weights;
  const memory::desc b_desc =
      reorder_b ? memory::desc(b.get_desc().dims(), dt::f32, memory::format_tag::any) : b.get_desc();
  const dnnl::matmul::desc desc = bias ? dnnl::matmul::desc(a.get_desc(), b_desc, bias.get_desc(), y.get_desc())
                                       : dnnl::matmul::desc(a.get_desc(), b_desc, y.get_desc());
  std::optional<dnnl::matmul::primitive_desc> pd;
  try {
    pd = usable(dnnl::matmul::primitive_desc(desc, attr, cpu_engine()), /*allow_ref=*/false);
  } catch (const NotFast& e) {
    try {
      add_matmul_as_conv(node, a, b, bias, y, attr, b_constant, options);
      return;
    } catch (const NotFast& conv) {
      not_fast(e.why + "; as a convolution: " + conv.why);
    }
  }
  const memory weights = reorder_b ? node.constant_reordered(b, *b_constant->constant, pd->weights_desc(), options) : b;
  Args args{{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, y}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, bias);
  if (memory pad = node.scratchpad(*pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::matmul(*pd), std::move(args), std::string("matmul ") + pd->impl_info_str());
}

void prepare_gemm(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  const memory::dims a = all_f32_dims(in_value(g, n, 0)), b = all_f32_dims(in_value(g, n, 1));
  const memory::dims y = all_f32_dims(out_value(g, n));
  if (a.size() != 2 || b.size() != 2 || y.size() != 2) not_fast("rank");
  const bool ta = n.int_attr("transA", 0) != 0, tb = n.int_attr("transB", 0) != 0;
  const float alpha = n.float_attr("alpha", 1.0f), beta = n.float_attr("beta", 1.0f);
  const int64_t M = y[0], N = y[1], K = ta ? a[0] : a[1];
  const memory A = node.input(0, strided_desc({M, K}, ta ? memory::dims{1, M} : memory::dims{K, 1}));
  const memory B = node.input(1, strided_desc({K, N}, tb ? memory::dims{1, K} : memory::dims{N, 1}));
  memory bias;
  if (has_in(n, 2) && beta != 0.0f) {
    const Shape& c = in_value(g, n, 2).shape;
    require_f32(in_value(g, n, 2));
    if (beta != 1.0f || !(c == Shape{N} || c == Shape{1, N})) not_fast("C other than a row of biases");
    bias = node.input(2, plain_desc({1, N}, dt::f32));
  }
  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  const Value& bv = in_value(g, n, 1);
  add_matmul(node, A, B, bias, node.output(0, plain_desc(y, dt::f32)), attr, bv.is_constant() ? &bv : nullptr, options);
}

void prepare_matmul(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  memory::dims a = all_f32_dims(in_value(g, n, 0)), b = all_f32_dims(in_value(g, n, 1));
  if (in_value(g, n, 0).shape.empty() || in_value(g, n, 1).shape.empty()) not_fast("scalar operand");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  memory::dims y(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) not_fast("batch axes");
    y[i] = std::max(a[i], b[i]);
  }
  y[rank - 2] = a[rank - 2];
  y[rank - 1] = b[rank - 1];
  if (rank > 12) not_fast("rank over 12");
  // b the same for every batch (weights, mostly): the rows of all of a's batches are one
  // product, [P·M, K]·[K, N], the same bytes. oneDNN ran torch's attention in-projection,
  // x [197, 1, 768] by [768, 2304], as 197 products of one row each: 20 ms against 5 ms.
  if (rank > 2 && std::all_of(b.begin(), b.end() - 2, [](int64_t d) { return d == 1; })) {
    const int64_t rows = std::accumulate(a.begin(), a.end() - 1, int64_t{1}, std::multiplies<>());
    a = {rows, a[rank - 1]};
    b = {b[rank - 2], b[rank - 1]};
    y = {rows, y[rank - 1]};
  }
  const memory A = node.input(0, plain_desc(a, dt::f32));
  const memory B = node.input(1, plain_desc(b, dt::f32));
  const Value& bv = in_value(g, n, 1);
  try {
    add_matmul(node, A, B, {}, node.output(0, plain_desc(y, dt::f32)), user_scratchpad_attr(),
               bv.is_constant() ? &bv : nullptr, options);
  } catch (const NotFast& e) {
    // Batched and below AVX-512 (an attention's products of two activations): the reference
    // kernels' product a batch at a time, on the run's threads (fast/batched_product.h).
    node.add_loop(
        [shape = BatchedProduct{a, b, y}](KernelContext& ctx) {
          batched_product(shape, reinterpret_cast<const float*>(ctx.in(0).data),
                          reinterpret_cast<const float*>(ctx.in(1).data), reinterpret_cast<float*>(ctx.out(0).data));
        },
        "batched product (memledger, the reference's product per batch; oneDNN refused: " + e.why + ")");
  }
}

}  // namespace memledger::exec::fast
