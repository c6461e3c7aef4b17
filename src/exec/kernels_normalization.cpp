// Softmax, inference BatchNormalization, LayerNormalization and the Reduce* family on
// float32. Softmax and the normalizations finish reading a row (or a channel's
// parameters) before writing it, so their output may be written over their input.
#include <cmath>
#include <limits>

#include "kernel.h"
#include "strided.h"

namespace memledger::exec {
namespace {

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

// Softmax along one axis (opset ≥ 13), or over the flattened axes from `axis` on (before).
template <bool kLog>
void softmax(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const int64_t rank = x.rank();
  const bool old = ctx.graph.opset < 13;
  const int64_t axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", old ? 1 : -1), rank);
  const int64_t outer = product(x.shape, 0, axis);
  const int64_t len = old ? product(x.shape, axis, rank) : x.shape[axis];
  const int64_t inner = old ? 1 : product(x.shape, axis + 1, rank);
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float* in = px + o * len * inner + i;
      float* out = py + o * len * inner + i;
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < len; ++k) max = std::max(max, in[k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) {
        const float e = std::exp(in[k * inner] - max);
        sum += e;
        out[k * inner] = kLog ? in[k * inner] - max : e;
      }
      if constexpr (kLog) {
        const float log_sum = static_cast<float>(std::log(sum));
        for (int64_t k = 0; k < len; ++k) out[k * inner] -= log_sum;
      } else {
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t k = 0; k < len; ++k) out[k * inner] *= inv;
      }
    }
}

// y = (x − mean[c]) / sqrt(var[c] + ε) · scale[c] + B[c] over axis 1.
void batch_norm(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const float eps = ctx.node.float_attr("epsilon", 1e-5f);
  const int64_t channels = x.rank() > 1 ? x.shape[1] : 1;
  for (size_t i = 1; i <= 4; ++i)
    if (ctx.in(i).elements() != channels)
      fail("node {}: input {} has {} values for {} channels", ctx.node.label(), i, ctx.in(i).elements(), channels);
  const int64_t batch = x.rank() > 0 ? x.shape[0] : 1;
  const int64_t inner = x.rank() > 2 ? product(x.shape, 2, x.shape.size()) : 1;
  const float *scale = ctx.in(1).as<float>(), *bias = ctx.in(2).as<float>();
  const float *mean = ctx.in(3).as<float>(), *var = ctx.in(4).as<float>();
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      const float a = scale[c] / std::sqrt(var[c] + eps);
      const float b = bias[c] - mean[c] * a;
      const float* in = px + (n * channels + c) * inner;
      float* out = py + (n * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) out[i] = in[i] * a + b;
    }
}

// Normalises over the axes from `axis` on; Scale and B broadcast to those axes. Optional
// outputs Mean and InvStdDev have the outer shape with unit normalised axes.
void layer_norm(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const int64_t rank = x.rank();
  const int64_t axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", -1), rank);
  const float eps = ctx.node.float_attr("epsilon", 1e-5f);
  const int64_t outer = product(x.shape, 0, axis), inner = product(x.shape, axis, rank);
  const Shape norm_shape(x.shape.begin() + axis, x.shape.end());
  const bool has_bias = ctx.has_input(2);
  StridedLoop<3> loop(norm_shape, {dense_strides(norm_shape), broadcast_strides(ctx.in(1).shape, norm_shape),
                                   has_bias ? broadcast_strides(ctx.in(2).shape, norm_shape)
                                            : std::vector<int64_t>(norm_shape.size(), 0)});
  static const float zero = 0.0f;
  const float* scale = ctx.in(1).as<float>();
  const float* bias = has_bias ? ctx.in(2).as<float>() : &zero;
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  float* mean_out = ctx.has_output(1) ? ctx.out(1).as<float>() : nullptr;
  float* inv_out = ctx.has_output(2) ? ctx.out(2).as<float>() : nullptr;
  for (int64_t o = 0; o < outer; ++o) {
    const float* in = px + o * inner;
    float* out = py + o * inner;
    double sum = 0;
    for (int64_t i = 0; i < inner; ++i) sum += in[i];
    const double mean = sum / static_cast<double>(inner);
    double sq = 0;
    for (int64_t i = 0; i < inner; ++i) sq += (in[i] - mean) * (in[i] - mean);
    const double inv_std = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
    const float m = static_cast<float>(mean), r = static_cast<float>(inv_std);
    loop.for_each_row([&](const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& s) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t e = off[0] + i;
        out[e] = (in[e] - m) * r * scale[off[1] + i * s[1]] + bias[off[2] + i * s[2]];
      }
    });
    if (mean_out) mean_out[o] = m;
    if (inv_out) inv_out[o] = r;
  }
}

// ---- Reduce* ----

enum class Reduce { kMean, kSum, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

std::vector<int64_t> reduce_axes(const KernelContext& ctx) {
  if (ctx.has_input(1)) return read_ints(ctx.in(1));
  return ctx.node.ints_attr("axes");
}

// T: float or double (the Reduce family takes float64 too).
template <Reduce kOp, typename T>
void reduce_as(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const int64_t rank = x.rank();
  std::vector<int64_t> axes = reduce_axes(ctx);
  const bool noop = ctx.node.int_attr("noop_with_empty_axes", 0) != 0;
  const T* px = x.as<T>();
  T* py = y.as<T>();
  if (axes.empty() && noop) {
    std::copy(px, px + x.elements(), py);
    return;
  }
  Shape kept = x.shape;
  if (axes.empty()) {
    for (auto& d : kept) d = 1;
  } else {
    for (int64_t a : axes) kept[normalize_axis(ctx.node, a, rank)] = 1;
  }
  if (element_count(kept) != y.elements()) fail("node {}: output size does not match the reduction", ctx.node.label());
  const T init = kOp == Reduce::kMax    ? -std::numeric_limits<T>::infinity()
                 : kOp == Reduce::kMin  ? std::numeric_limits<T>::infinity()
                 : kOp == Reduce::kProd ? T{1}
                                        : T{0};
  std::fill(py, py + y.elements(), init);
  // LogSumExp subtracts each output's maximum first (no overflow for large inputs).
  std::vector<T> max;
  if constexpr (kOp == Reduce::kLogSumExp) {
    max.assign(static_cast<size_t>(y.elements()), -std::numeric_limits<T>::infinity());
    StridedLoop<2> pass(x.shape, {dense_strides(x.shape), broadcast_strides(kept, x.shape)});
    pass.for_each_row([&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
      for (int64_t i = 0; i < n; ++i) {
        T& m = max[static_cast<size_t>(off[1] + i * s[1])];
        m = std::max(m, px[off[0] + i]);
      }
    });
    for (T& m : max)
      if (!std::isfinite(m)) m = 0;
  }
  StridedLoop<2> loop(x.shape, {dense_strides(x.shape), broadcast_strides(kept, x.shape)});
  loop.for_each_row([&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
    const T* in = px + off[0];
    T* out = py + off[1];
    for (int64_t i = 0; i < n; ++i) {
      T& acc = out[i * s[1]];
      if constexpr (kOp == Reduce::kMax)
        acc = std::max(acc, in[i]);
      else if constexpr (kOp == Reduce::kMin)
        acc = std::min(acc, in[i]);
      else if constexpr (kOp == Reduce::kProd)
        acc *= in[i];
      else if constexpr (kOp == Reduce::kL1)
        acc += std::fabs(in[i]);
      else if constexpr (kOp == Reduce::kL2 || kOp == Reduce::kSumSquare)
        acc += in[i] * in[i];
      else if constexpr (kOp == Reduce::kLogSumExp)
        acc += std::exp(in[i] - max[static_cast<size_t>(off[1] + i * s[1])]);
      else
        acc += in[i];
    }
  });
  for (int64_t i = 0; i < y.elements(); ++i) {
    if constexpr (kOp == Reduce::kL2) py[i] = std::sqrt(py[i]);
    if constexpr (kOp == Reduce::kLogSum) py[i] = std::log(py[i]);
    if constexpr (kOp == Reduce::kLogSumExp) py[i] = std::log(py[i]) + max[static_cast<size_t>(i)];
  }
  if constexpr (kOp == Reduce::kMean) {
    const T count = static_cast<T>(x.elements() / std::max<int64_t>(y.elements(), 1));
    for (int64_t i = 0; i < y.elements(); ++i) py[i] /= count;
  }
}

template <Reduce kOp>
void reduce(KernelContext& ctx) {
  if (ctx.in(0).dtype == DType::kFloat64)
    reduce_as<kOp, double>(ctx);
  else
    reduce_as<kOp, float>(ctx);
}

Kernel reduce_kernel(void (*run)(KernelContext&)) {
  return Kernel{
      .check =
          [](const Graph& g, const Node& n) {
            return check_dtypes(g, n, 0, {DType::kFloat32, DType::kFloat64});
          },
      .run = run,
  };
}

Kernel float_kernel(std::function<void(KernelContext&)> run) {
  return Kernel{
      .check = [](const Graph& g, const Node& n) { return check_float_inputs(g, n, {0}); },
      .run = std::move(run),
  };
}

}  // namespace

void add_normalization_kernels(KernelTable& t) {
  t.emplace_back(":Softmax", float_kernel(softmax<false>));
  t.emplace_back(":LogSoftmax", float_kernel(softmax<true>));
  Kernel bn = float_kernel(batch_norm);
  bn.check = [](const Graph& g, const Node& n) -> std::string {
    if (n.int_attr("training_mode", 0) != 0) return "training_mode";
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i].valid()) return "training outputs (running mean and variance)";
    if (n.inputs.size() < 5) return "fewer than 5 inputs";
    return check_float_inputs(g, n, {0, 1, 2, 3, 4});
  };
  t.emplace_back(":BatchNormalization", std::move(bn));
  Kernel ln = float_kernel(layer_norm);
  ln.check = [](const Graph& g, const Node& n) { return check_float_inputs(g, n, {0, 1, 2}); };
  t.emplace_back(":LayerNormalization", std::move(ln));
  t.emplace_back(":ReduceMean", reduce_kernel(reduce<Reduce::kMean>));
  t.emplace_back(":ReduceSum", reduce_kernel(reduce<Reduce::kSum>));
  t.emplace_back(":ReduceMax", reduce_kernel(reduce<Reduce::kMax>));
  t.emplace_back(":ReduceMin", reduce_kernel(reduce<Reduce::kMin>));
  t.emplace_back(":ReduceProd", reduce_kernel(reduce<Reduce::kProd>));
  t.emplace_back(":ReduceL1", reduce_kernel(reduce<Reduce::kL1>));
  t.emplace_back(":ReduceL2", reduce_kernel(reduce<Reduce::kL2>));
  t.emplace_back(":ReduceSumSquare", reduce_kernel(reduce<Reduce::kSumSquare>));
  t.emplace_back(":ReduceLogSum", reduce_kernel(reduce<Reduce::kLogSum>));
  t.emplace_back(":ReduceLogSumExp", reduce_kernel(reduce<Reduce::kLogSumExp>));
}

}  // namespace memledger::exec
