// Pad (constant, reflect, edge, wrap; negative pads crop) and Resize / Upsample (nearest
// with its four rounding modes, n-linear, cubic; every coordinate transformation mode of
// opsets 10–17, tf_crop_and_resize's extrapolation and cubic's exclude_outside). Resize
// computes each output element from per-axis taps (source index, weight) worked out once
// per axis, the way ONNX's reference does, so no intermediate tensor is made. Neither
// writes over its input.
#include <cmath>
#include <cstring>

#include "kernel.h"

namespace memledger::exec {
namespace {

// ---- Pad ----

struct PadArgs {
  std::vector<int64_t> begin, end;
  std::string mode;
};

PadArgs pad_args(const KernelContext& ctx, int64_t rank) {
  PadArgs a;
  std::vector<int64_t> pads = ctx.has_input(1) ? read_ints(ctx.in(1)) : ctx.node.ints_attr("pads");
  a.mode = ctx.node.string_attr("mode", "constant");
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    axes = read_ints(ctx.in(3));
    for (int64_t& x : axes) x = normalize_axis(ctx.node, x, rank);
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size())
    fail("node {}: pads has {} values for {} axes", ctx.node.label(), pads.size(), axes.size());
  a.begin.assign(static_cast<size_t>(rank), 0);
  a.end.assign(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    a.begin[static_cast<size_t>(axes[i])] = pads[i];
    a.end[static_cast<size_t>(axes[i])] = pads[i + axes.size()];
  }
  return a;
}

// The source index for output coordinate o on an axis of extent n, or -1 for the constant.
int64_t pad_source(int64_t o, int64_t begin, int64_t n, const std::string& mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  if (mode == "constant" || n == 0) return -1;
  if (mode == "edge") return i < 0 ? 0 : n - 1;
  if (mode == "wrap") return ((i % n) + n) % n;
  // reflect: mirror without repeating the edge element
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  i = ((i % period) + period) % period;
  return i < n ? i : period - i;
}

void pad(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const int64_t rank = x.rank();
  const PadArgs a = pad_args(ctx, rank);
  if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge" && a.mode != "wrap")
    fail("node {}: Pad mode '{}' is not supported", ctx.node.label(), a.mode);
  const int eb = host_element_bytes(x.dtype);
  std::vector<std::byte> value(static_cast<size_t>(eb), std::byte{0});
  if (ctx.has_input(2) && ctx.in(2).elements() > 0) {
    std::memcpy(value.data(), ctx.in(2).data, value.size());
  } else if (!ctx.has_input(1) && ctx.node.has_attr("value")) {
    const float v = ctx.node.float_attr("value", 0.0f);
    if (x.dtype != DType::kFloat32) fail("node {}: Pad value attribute on {}", ctx.node.label(), dtype_name(x.dtype));
    std::memcpy(value.data(), &v, sizeof v);
  }
  for (int64_t i = 0; i < rank; ++i)
    if (y.shape[i] != x.shape[i] + a.begin[i] + a.end[i])
      fail("node {}: pads give another shape than the graph's", ctx.node.label());
  if (y.elements() == 0) return;
  if (rank == 0) {
    std::memcpy(y.data, x.data, static_cast<size_t>(eb));
    return;
  }
  const std::vector<int64_t> xs = dense_strides(x.shape);
  // Per axis, the source index of every output coordinate (-1: the constant).
  std::vector<std::vector<int64_t>> source(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d)
    for (int64_t o = 0; o < y.shape[d]; ++o) source[d].push_back(pad_source(o, a.begin[d], x.shape[d], a.mode));
  const int64_t cols = y.shape[rank - 1];
  std::vector<int64_t> index(static_cast<size_t>(rank - 1), 0);
  std::byte* out = y.data;
  for (;;) {
    int64_t base = 0;
    bool constant_row = false;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      const int64_t s = source[d][index[d]];
      if (s < 0) constant_row = true;
      base += s * xs[d];
    }
    const std::vector<int64_t>& inner = source[rank - 1];
    for (int64_t j = 0; j < cols; ++j, out += eb) {
      const int64_t s = inner[j];
      if (constant_row || s < 0)
        std::memcpy(out, value.data(), value.size());
      else
        std::memcpy(out, x.data + (base + s) * eb, static_cast<size_t>(eb));
    }
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < y.shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) break;
  }
}

// ---- Resize ----

struct Tap {
  int64_t index;
  float weight;
};

struct AxisTaps {
  std::vector<std::vector<Tap>> taps;  // per output coordinate; empty: extrapolate
};

float cubic_weight(float t, float a, int k) {
  // Keys' cubic convolution for the four taps at floor−1, floor, floor+1, floor+2.
  const float x = k == 0 ? t + 1 : k == 1 ? t : k == 2 ? 1 - t : 2 - t;
  if (k == 1 || k == 2) return ((a + 2) * x - (a + 3)) * x * x + 1;
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

struct ResizeArgs {
  std::string mode = "nearest", transform = "half_pixel", nearest = "round_prefer_floor";
  float cubic_a = -0.75f, extrapolation = 0.0f;
  bool exclude_outside = false;
  std::vector<float> scales, roi;
};

ResizeArgs resize_args(const KernelContext& ctx) {
  ResizeArgs r;
  const Node& n = ctx.node;
  r.mode = n.string_attr("mode", "nearest");
  const bool upsample = n.op == "Upsample";
  const int64_t opset = ctx.graph.opset;
  if (upsample || opset < 11) {
    r.transform = "asymmetric";
    r.nearest = "floor";
    if (r.mode == "bilinear") r.mode = "linear";
  } else {
    r.transform = n.string_attr("coordinate_transformation_mode", "half_pixel");
    r.nearest = n.string_attr("nearest_mode", "round_prefer_floor");
    r.cubic_a = n.float_attr("cubic_coeff_a", -0.75f);
    r.exclude_outside = n.int_attr("exclude_outside", 0) != 0;
    r.extrapolation = n.float_attr("extrapolation_value", 0.0f);
  }
  auto floats = [&](size_t i) {
    std::vector<float> v;
    if (!ctx.has_input(i)) return v;
    const InputView& t = ctx.in(i);
    if (t.dtype == DType::kFloat32) {
      const float* p = t.as<float>();
      v.assign(p, p + t.elements());
    } else if (t.dtype == DType::kFloat64) {
      const double* p = t.as<double>();
      for (int64_t k = 0; k < t.elements(); ++k) v.push_back(static_cast<float>(p[k]));
    }
    return v;
  };
  if (upsample && n.has_attr("scales")) {
    const auto& s = std::get<std::vector<float>>(n.attributes.at("scales"));
    r.scales.assign(s.begin(), s.end());
  } else if (upsample || opset < 11) {
    r.scales = floats(1);
  } else {
    r.roi = floats(1);
    r.scales = floats(2);
  }
  return r;
}

// x_original for output coordinate x on an axis resized from `in` by `scale`. The resized
// length in the formulas is in·scale unrounded, as ONNX's reference has it (it differs from
// the output extent when scales are given and in·scale is not whole).
float original_coordinate(const ResizeArgs& r, int64_t x, int64_t in, float scale, float start, float end) {
  const float xf = static_cast<float>(x);
  const float out = scale * static_cast<float>(in);
  const std::string& m = r.transform;
  if (m == "half_pixel") return (xf + 0.5f) / scale - 0.5f;
  if (m == "pytorch_half_pixel") return out > 1 ? (xf + 0.5f) / scale - 0.5f : 0.0f;
  if (m == "align_corners") return out == 1 ? 0.0f : xf * static_cast<float>(in - 1) / static_cast<float>(out - 1);
  if (m == "asymmetric") return xf / scale;
  if (m == "tf_half_pixel_for_nn") return (xf + 0.5f) / scale;
  if (m == "tf_crop_and_resize")
    return out > 1 ? start * static_cast<float>(in - 1) + xf * (end - start) * static_cast<float>(in - 1) / (out - 1)
                   : 0.5f * (start + end) * static_cast<float>(in - 1);
  fail("Resize: coordinate_transformation_mode '{}' is not supported", m);
}

int64_t nearest_index(const std::string& mode, float x) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  const float f = std::floor(x);
  if (x - f == 0.5f) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

AxisTaps axis_taps(const ResizeArgs& r, int64_t in, int64_t out, float scale, float start, float end) {
  AxisTaps a;
  a.taps.resize(static_cast<size_t>(out));
  auto clamp = [&](int64_t i) { return std::max<int64_t>(0, std::min(in - 1, i)); };
  for (int64_t x = 0; x < out; ++x) {
    const float xo = original_coordinate(r, x, in, scale, start, end);
    std::vector<Tap>& taps = a.taps[static_cast<size_t>(x)];
    if (r.transform == "tf_crop_and_resize" && (xo < 0 || xo > static_cast<float>(in - 1))) continue;
    if (r.mode == "nearest") {
      taps.push_back({clamp(nearest_index(r.nearest, xo)), 1.0f});
    } else if (r.mode == "linear") {
      const float clamped = std::max(0.0f, std::min(static_cast<float>(in - 1), xo));
      const auto lo = static_cast<int64_t>(std::floor(clamped));
      const float t = clamped - static_cast<float>(lo);
      taps.push_back({lo, 1.0f - t});
      if (t != 0.0f) taps.push_back({clamp(lo + 1), t});
    } else if (r.mode == "cubic") {
      const auto lo = static_cast<int64_t>(std::floor(xo));
      const float t = xo - static_cast<float>(lo);
      float sum = 0;
      for (int k = 0; k < 4; ++k) {
        const int64_t i = lo - 1 + k;
        float w = cubic_weight(t, r.cubic_a, k);
        if (r.exclude_outside && (i < 0 || i >= in)) w = 0;
        sum += w;
        taps.push_back({clamp(i), w});
      }
      if (r.exclude_outside && sum != 0)
        for (Tap& tap : taps) tap.weight /= sum;
    } else {
      fail("Resize: mode '{}' is not supported", r.mode);
    }
  }
  return a;
}

void resize(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const int64_t rank = x.rank();
  const ResizeArgs r = resize_args(ctx);
  if (r.mode != "nearest" && x.dtype != DType::kFloat32)
    fail("node {}: {} Resize of {}", ctx.node.label(), r.mode, dtype_name(x.dtype));
  std::vector<AxisTaps> axes(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t in = x.shape[d], out = y.shape[d];
    float scale = static_cast<float>(out) / static_cast<float>(std::max<int64_t>(in, 1));
    if (!r.scales.empty()) {
      if (static_cast<int64_t>(r.scales.size()) != rank)
        fail("node {}: {} scales for rank {}", ctx.node.label(), r.scales.size(), rank);
      scale = r.scales[static_cast<size_t>(d)];
    }
    float start = 0, end = 1;
    if (static_cast<int64_t>(r.roi.size()) == 2 * rank) {
      start = r.roi[static_cast<size_t>(d)];
      end = r.roi[static_cast<size_t>(d + rank)];
    }
    axes[static_cast<size_t>(d)] = axis_taps(r, in, out, scale, start, end);
  }
  const std::vector<int64_t> xs = dense_strides(x.shape);
  const int eb = host_element_bytes(x.dtype);
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  const int64_t total = y.elements();
  std::vector<size_t> choice(static_cast<size_t>(rank));
  for (int64_t e = 0; e < total; ++e) {
    bool extrapolate = false;
    for (int64_t d = 0; d < rank; ++d) extrapolate |= axes[d].taps[index[d]].empty();
    if (x.dtype == DType::kFloat32) {
      float acc = 0;
      if (extrapolate) {
        acc = r.extrapolation;
      } else {
        const float* px = x.as<float>();
        std::fill(choice.begin(), choice.end(), 0);
        for (;;) {
          float w = 1;
          int64_t off = 0;
          for (int64_t d = 0; d < rank; ++d) {
            const Tap& t = axes[d].taps[index[d]][choice[d]];
            w *= t.weight;
            off += t.index * xs[d];
          }
          acc += w * px[off];
          int64_t d = rank - 1;
          for (; d >= 0; --d) {
            if (++choice[d] < axes[d].taps[index[d]].size()) break;
            choice[d] = 0;
          }
          if (d < 0) break;
        }
      }
      y.as<float>()[e] = acc;
    } else {
      int64_t off = 0;
      for (int64_t d = 0; d < rank && !extrapolate; ++d) off += axes[d].taps[index[d]][0].index * xs[d];
      if (extrapolate)
        std::memset(y.data + e * eb, 0, static_cast<size_t>(eb));
      else
        std::memcpy(y.data + e * eb, x.data + off * eb, static_cast<size_t>(eb));
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < y.shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

void add_resample_kernels(KernelTable& t) {
  t.emplace_back(":Pad", Kernel{.check = [](const Graph&, const Node& n) -> std::string {
                                  const std::string mode = n.string_attr("mode", "constant");
                                  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
                                    return "mode '" + mode + "'";
                                  return {};
                                },
                                .run = pad});
  auto check_resize = [](const Graph& g, const Node& n) -> std::string {
    std::string mode = n.string_attr("mode", "nearest");
    if (mode == "bilinear") mode = "linear";
    if (mode != "nearest" && mode != "linear" && mode != "cubic") return "mode '" + mode + "'";
    if (mode != "nearest") return check_float_inputs(g, n, {0});
    return {};
  };
  t.emplace_back(":Resize", Kernel{.check = check_resize, .run = resize});
  t.emplace_back(":Upsample", Kernel{.check = check_resize, .run = resize});
}

}  // namespace memledger::exec
