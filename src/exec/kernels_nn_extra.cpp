// Float32 kernels of the less common neural-network operators: ConvTranspose (direct
// scatter of every input element through the kernel window), InstanceNormalization, LRN,
// LpNormalization, MeanVarianceNormalization, Hardmax, the inference-math losses
// (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) and the unary functions the
// elementwise family lacks (trigonometric, Round, Softsign, Selu, Celu, ThresholdedRelu,
// Shrink). The unary ones read element i before writing it (in place allowed); the others
// write a separate output.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernel.h"

namespace memledger::exec {
namespace {

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

// ---- ConvTranspose ----

void conv_transpose(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const InputView& w = ctx.in(1);
  OutputView& y = ctx.out();
  const Node& n = ctx.node;
  const size_t spatial = x.shape.size() - 2;
  const int64_t group = n.int_attr("group", 1);
  const int64_t batch = x.shape[0], cin = x.shape[1], cout = y.shape[1];
  const int64_t cin_g = cin / group, cout_g = cout / group;
  if (w.shape[0] != cin || w.shape[1] * group != cout) fail("node {}: weights do not match the channels", n.label());
  auto ints = [&](const char* key, int64_t fallback) {
    std::vector<int64_t> v = n.ints_attr(key);
    if (v.empty()) v.assign(spatial, fallback);
    if (v.size() != spatial) fail("node {}: {} has {} values for {} spatial axes", n.label(), key, v.size(), spatial);
    return v;
  };
  const std::vector<int64_t> strides = ints("strides", 1), dilations = ints("dilations", 1);
  const std::vector<int64_t> out_pad = ints("output_padding", 0);
  std::vector<int64_t> pads = n.ints_attr("pads");
  const std::string auto_pad = n.string_attr("auto_pad", "NOTSET");
  std::vector<int64_t> begin(spatial, 0);
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t k = w.shape[2 + d];
    const int64_t full = strides[d] * (x.shape[2 + d] - 1) + out_pad[d] + (k - 1) * dilations[d] + 1;
    const int64_t total = full - y.shape[2 + d];
    // A stated output shape (or SAME) decides the padding; an output larger than the
    // full one gets the extra at the end (as output_padding does).
    if (n.has_attr("output_shape") || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
      begin[d] = total <= 0 ? 0 : auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    else if (pads.size() == 2 * spatial)
      begin[d] = pads[d];
  }
  const std::vector<int64_t> xs = dense_strides(x.shape), ws = dense_strides(w.shape), ys = dense_strides(y.shape);
  const float* px = x.as<float>();
  const float* pw = w.as<float>();
  float* py = y.as<float>();
  const int64_t out_elems = y.elements();
  if (ctx.has_input(2)) {
    const float* b = ctx.in(2).as<float>();
    const int64_t inner = product(y.shape, 2, y.shape.size());
    for (int64_t i = 0; i < out_elems; ++i) py[i] = b[(i / inner) % cout];
  } else {
    std::fill(py, py + out_elems, 0.0f);
  }
  const int64_t in_spatial = product(x.shape, 2, x.shape.size()), k_spatial = product(w.shape, 2, w.shape.size());
  std::vector<int64_t> ipos(spatial), kpos(spatial);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < cin; ++c) {
      const int64_t g = c / cin_g;
      for (int64_t is = 0; is < in_spatial; ++is) {
        int64_t rem = is;
        for (size_t d = spatial; d-- > 0;) {
          ipos[d] = rem % x.shape[2 + d];
          rem /= x.shape[2 + d];
        }
        const float xv = px[(b * cin + c) * in_spatial + is];
        for (int64_t ks = 0; ks < k_spatial; ++ks) {
          int64_t krem = ks, yoff = 0;
          bool inside = true;
          for (size_t d = spatial; d-- > 0;) {
            kpos[d] = krem % w.shape[2 + d];
            krem /= w.shape[2 + d];
            const int64_t o = ipos[d] * strides[d] + kpos[d] * dilations[d] - begin[d];
            if (o < 0 || o >= y.shape[2 + d]) inside = false;
            yoff += o * ys[2 + d];
          }
          if (!inside) continue;
          for (int64_t m = 0; m < cout_g; ++m) {
            const int64_t oc = g * cout_g + m;
            py[b * ys[0] + oc * ys[1] + yoff] += xv * pw[c * ws[0] + m * ws[1] + ks];
          }
        }
      }
    }
}

// ---- normalizations ----

void instance_norm(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const float eps = ctx.node.float_attr("epsilon", 1e-5f);
  const int64_t batch = x.shape[0], channels = x.shape[1], inner = product(x.shape, 2, x.shape.size());
  const float *scale = ctx.in(1).as<float>(), *bias = ctx.in(2).as<float>();
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      const float* in = px + (b * channels + c) * inner;
      float* out = py + (b * channels + c) * inner;
      double sum = 0;
      for (int64_t i = 0; i < inner; ++i) sum += in[i];
      const double mean = sum / static_cast<double>(inner);
      double sq = 0;
      for (int64_t i = 0; i < inner; ++i) sq += (in[i] - mean) * (in[i] - mean);
      const float r = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(inner) + eps));
      const float m = static_cast<float>(mean);
      for (int64_t i = 0; i < inner; ++i) out[i] = (in[i] - m) * r * scale[c] + bias[c];
    }
}

// LRN across channels: y = x / (bias + alpha/size · Σ x² over the size channels around c)^beta.
void lrn(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const Node& n = ctx.node;
  const float alpha = n.float_attr("alpha", 1e-4f), beta = n.float_attr("beta", 0.75f), bias = n.float_attr("bias", 1);
  const int64_t size = n.int_attr("size", 1);
  const int64_t batch = x.shape[0], channels = x.shape[1], inner = product(x.shape, 2, x.shape.size());
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        float sum = 0;
        for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(channels - 1, c + after); ++k) {
          const float v = px[(b * channels + k) * inner + i];
          sum += v * v;
        }
        const int64_t at = (b * channels + c) * inner + i;
        py[at] = px[at] / std::pow(bias + alpha / static_cast<float>(size) * sum, beta);
      }
}

void lp_norm(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const int64_t axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", -1), x.rank());
  const int64_t p = ctx.node.int_attr("p", 2);
  const int64_t outer = product(x.shape, 0, static_cast<size_t>(axis)), len = x.shape[axis];
  const int64_t inner = product(x.shape, static_cast<size_t>(axis + 1), x.shape.size());
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double norm = 0;
      for (int64_t k = 0; k < len; ++k) {
        const double v = px[(o * len + k) * inner + i];
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p != 1) norm = std::sqrt(norm);
      for (int64_t k = 0; k < len; ++k) {
        const int64_t at = (o * len + k) * inner + i;
        py[at] = norm == 0 ? 0.0f : static_cast<float>(px[at] / norm);
      }
    }
}

// Mean and variance over `axes` (default 0, 2, 3), y = (x − mean) / sqrt(var + 1e-9).
void mean_variance_norm(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  std::vector<int64_t> axes = ctx.node.ints_attr("axes", {0, 2, 3});
  Shape kept = x.shape;
  for (int64_t& a : axes) kept[normalize_axis(ctx.node, a, x.rank())] = 1;
  const std::vector<int64_t> ks = broadcast_strides(kept, x.shape);
  const int64_t total = x.elements(), groups = element_count(kept);
  const double count = static_cast<double>(total) / static_cast<double>(std::max<int64_t>(groups, 1));
  std::vector<double> sum(static_cast<size_t>(groups), 0), sq(static_cast<size_t>(groups), 0);
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  std::vector<int64_t> group_of(static_cast<size_t>(total));
  std::vector<int64_t> index(x.shape.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    int64_t g = 0;
    for (size_t d = 0; d < index.size(); ++d) g += index[d] * ks[d];
    group_of[static_cast<size_t>(e)] = g;
    sum[static_cast<size_t>(g)] += px[e];
    sq[static_cast<size_t>(g)] += static_cast<double>(px[e]) * px[e];
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < x.shape[d]) break;
      index[d] = 0;
    }
  }
  for (int64_t e = 0; e < total; ++e) {
    const auto g = static_cast<size_t>(group_of[static_cast<size_t>(e)]);
    const double mean = sum[g] / count, var = sq[g] / count - mean * mean;
    py[e] = static_cast<float>((px[e] - mean) / std::sqrt(var + 1e-9));
  }
}

void hardmax(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const bool old = ctx.graph.opset < 13;
  const int64_t axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", old ? 1 : -1), x.rank());
  const int64_t outer = product(x.shape, 0, static_cast<size_t>(axis));
  const int64_t len = old ? product(x.shape, static_cast<size_t>(axis), x.shape.size()) : x.shape[axis];
  const int64_t inner = old ? 1 : product(x.shape, static_cast<size_t>(axis + 1), x.shape.size());
  const float* px = x.as<float>();
  float* py = ctx.out().as<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < len; ++k)
        if (px[(o * len + k) * inner + i] > px[(o * len + best) * inner + i]) best = k;
      for (int64_t k = 0; k < len; ++k) py[(o * len + k) * inner + i] = k == best ? 1.0f : 0.0f;
    }
}

// ---- losses ----

// loss[n, d…] = −input[n, target, d…] · weight[target] (0 where target == ignore_index),
// reduced by none, sum or mean (the mean divides by the sum of the weights used).
void nll(const Node& node, const float* input, const Shape& shape, const std::vector<int64_t>& target,
         const float* weight, OutputView& y) {
  const int64_t batch = shape[0], classes = shape[1], inner = product(shape, 2, shape.size());
  const std::string reduction = node.string_attr("reduction", "mean");
  const bool has_ignore = node.has_attr("ignore_index");
  const int64_t ignore = node.int_attr("ignore_index", 0);
  std::vector<float> loss(static_cast<size_t>(batch * inner));
  double sum = 0, weights = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t t = target[static_cast<size_t>(b * inner + i)];
      float l = 0, w = 0;
      if (!(has_ignore && t == ignore)) {
        if (t < 0 || t >= classes) fail("node {}: target {} is outside 0..{}", node.label(), t, classes - 1);
        w = weight ? weight[t] : 1.0f;
        l = -input[(b * classes + t) * inner + i] * w;
      }
      loss[static_cast<size_t>(b * inner + i)] = l;
      sum += l;
      weights += w;
    }
  float* py = y.as<float>();
  if (reduction == "none")
    std::copy(loss.begin(), loss.end(), py);
  else if (reduction == "sum")
    py[0] = static_cast<float>(sum);
  else
    py[0] = weights == 0 ? 0.0f : static_cast<float>(sum / weights);
}

void nll_loss(KernelContext& ctx) {
  nll(ctx.node, ctx.in(0).as<float>(), ctx.in(0).shape, read_ints(ctx.in(1)),
      ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr, ctx.out());
}

void softmax_cross_entropy(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const int64_t batch = x.shape[0], classes = x.shape[1], inner = product(x.shape, 2, x.shape.size());
  std::vector<float> log_prob(static_cast<size_t>(x.elements()));
  const float* px = x.as<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < classes; ++c) max = std::max(max, px[(b * classes + c) * inner + i]);
      double sum = 0;
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(px[(b * classes + c) * inner + i] - max);
      const float log_sum = static_cast<float>(std::log(sum));
      for (int64_t c = 0; c < classes; ++c) {
        const int64_t at = (b * classes + c) * inner + i;
        log_prob[static_cast<size_t>(at)] = px[at] - max - log_sum;
      }
    }
  nll(ctx.node, log_prob.data(), x.shape, read_ints(ctx.in(1)), ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr,
      ctx.out(0));
  if (ctx.has_output(1)) std::copy(log_prob.begin(), log_prob.end(), ctx.out(1).as<float>());
}

// ---- unary ----

template <typename Make>
Kernel unary(Make make) {
  return Kernel{
      .check = [](const Graph& g, const Node& n) { return check_float_inputs(g, n, {0}); },
      .run =
          [make](KernelContext& ctx) {
            const auto f = make(ctx.node);
            const float* x = ctx.in(0).as<float>();
            float* y = ctx.out().as<float>();
            for (int64_t i = 0, count = ctx.out().elements(); i < count; ++i) y[i] = f(x[i]);
          },
  };
}

Kernel float_kernel(void (*run)(KernelContext&), std::initializer_list<size_t> float_inputs) {
  std::vector<size_t> inputs(float_inputs);
  return Kernel{.check =
                    [inputs](const Graph& g, const Node& n) {
                      for (size_t i : inputs)
                        if (auto why = check_float_inputs(g, n, {i}); !why.empty()) return why;
                      return std::string();
                    },
                .run = run};
}

}  // namespace

void add_nn_extra_kernels(KernelTable& t) {
  t.emplace_back(":ConvTranspose", float_kernel(conv_transpose, {0, 1, 2}));
  t.emplace_back(":InstanceNormalization", float_kernel(instance_norm, {0, 1, 2}));
  t.emplace_back(":LpNormalization", float_kernel(lp_norm, {0}));
  t.emplace_back(":LRN", float_kernel(lrn, {0}));
  t.emplace_back(":MeanVarianceNormalization", float_kernel(mean_variance_norm, {0}));
  t.emplace_back(":Hardmax", float_kernel(hardmax, {0}));
  t.emplace_back(":NegativeLogLikelihoodLoss", float_kernel(nll_loss, {0, 2}));
  t.emplace_back(":SoftmaxCrossEntropyLoss", float_kernel(softmax_cross_entropy, {0, 2}));
  auto add = [&](const char* op, auto f) {
    t.emplace_back(std::string(":") + op, unary([f](const Node&) { return f; }));
  };
  add("Sin", [](float x) { return std::sin(x); });
  add("Cos", [](float x) { return std::cos(x); });
  add("Tan", [](float x) { return std::tan(x); });
  add("Asin", [](float x) { return std::asin(x); });
  add("Acos", [](float x) { return std::acos(x); });
  add("Atan", [](float x) { return std::atan(x); });
  add("Sinh", [](float x) { return std::sinh(x); });
  add("Cosh", [](float x) { return std::cosh(x); });
  add("Asinh", [](float x) { return std::asinh(x); });
  add("Acosh", [](float x) { return std::acosh(x); });
  add("Atanh", [](float x) { return std::atanh(x); });
  add("Round", [](float x) { return std::nearbyint(x); });  // half to even under the default rounding mode
  add("Softsign", [](float x) { return x / (1.0f + std::fabs(x)); });
  t.emplace_back(":Selu", unary([](const Node& n) {
                   const float alpha = n.float_attr("alpha", 1.67326319217681884765625f);
                   const float gamma = n.float_attr("gamma", 1.05070102214813232421875f);
                   return [alpha, gamma](float x) { return x > 0 ? gamma * x : gamma * (alpha * std::exp(x) - alpha); };
                 }));
  t.emplace_back(":Celu", unary([](const Node& n) {
                   const float alpha = n.float_attr("alpha", 1.0f);
                   return
                       [alpha](float x) { return std::max(0.0f, x) + std::min(0.0f, alpha * std::expm1(x / alpha)); };
                 }));
  t.emplace_back(":ThresholdedRelu", unary([](const Node& n) {
                   const float alpha = n.float_attr("alpha", 1.0f);
                   return [alpha](float x) { return x > alpha ? x : 0.0f; };
                 }));
  t.emplace_back(":Shrink", unary([](const Node& n) {
                   const float bias = n.float_attr("bias", 0.0f), lambd = n.float_attr("lambd", 0.5f);
                   return [bias, lambd](float x) { return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0f; };
                 }));
}

}  // namespace memledger::exec
