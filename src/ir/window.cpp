#include "memledger/ir/window.h"

#include <algorithm>

#include "memledger/core/error.h"

namespace memledger {

bool Window::is_pointwise() const {
  for (int a = 0; a < kMaxSpatial; ++a)
    if (k[a] != 1 || stride[a] != 1 || pad_begin[a] != 0 || in[a] != out[a]) return false;
  return true;
}

Window window(const Node& node, const Shape& x, const Shape& y, std::vector<int64_t> kernel) {
  const int spatial = static_cast<int>(x.size()) - 2;
  if (spatial < 1 || spatial > kMaxSpatial || y.size() != x.size())
    fail("node {}: {} spatial axes (1 to 3 supported)", node.label(), spatial);
  if (static_cast<int>(kernel.size()) != spatial) fail("node {}: kernel rank does not match the input", node.label());
  auto attr = [&](const char* key, int64_t fallback, size_t count) {
    std::vector<int64_t> v = node.ints_attr(key, std::vector<int64_t>(count, fallback));
    if (v.size() != count)
      fail("node {}: attribute '{}' has {} values, expected {}", node.label(), key, v.size(), count);
    return v;
  };
  const auto strides = attr("strides", 1, spatial);
  const auto dilations = attr("dilations", 1, spatial);
  const auto pads = attr("pads", 0, 2 * spatial);
  const std::string auto_pad = node.string_attr("auto_pad", "NOTSET");
  Window w;
  w.spatial = spatial;
  const int shift = kMaxSpatial - spatial;
  for (int a = 0; a < kMaxSpatial; ++a) {
    w.in[a] = w.out[a] = w.k[a] = w.stride[a] = w.dilation[a] = 1;
    w.pad_begin[a] = w.pad_end[a] = 0;
  }
  for (int i = 0; i < spatial; ++i) {
    const int a = shift + i;
    w.in[a] = x[2 + i];
    w.out[a] = y[2 + i];
    w.k[a] = kernel[i];
    w.stride[a] = strides[i];
    w.dilation[a] = dilations[i];
    if (w.stride[a] < 1 || w.dilation[a] < 1 || w.k[a] < 1)
      fail("node {}: strides, dilations and kernel extents must be positive", node.label());
    if (auto_pad == "NOTSET") {
      w.pad_begin[a] = pads[i];
      w.pad_end[a] = pads[spatial + i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total =
          std::max<int64_t>(0, (w.out[a] - 1) * w.stride[a] + (w.k[a] - 1) * w.dilation[a] + 1 - w.in[a]);
      w.pad_begin[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[a] = total - w.pad_begin[a];
    } else if (auto_pad != "VALID") {
      fail("node {}: auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", node.label(), auto_pad);
    }
  }
  return w;
}

void valid_range(int64_t n, int64_t out, int64_t s, int64_t p, int64_t offset, int64_t& lo, int64_t& hi) {
  // o·s − p + offset ≥ 0  ⇔  o ≥ ceil((p − offset) / s)
  const int64_t need = p - offset;
  lo = need <= 0 ? 0 : (need + s - 1) / s;
  // o·s − p + offset ≤ n − 1  ⇔  o ≤ floor((n − 1 + p − offset) / s)
  const int64_t top = n - 1 + p - offset;
  hi = top < 0 ? 0 : std::min(out, top / s + 1);
  lo = std::min(lo, hi);
}

int64_t im2col_block_rows(const Window& w, int64_t k) {
  const int64_t rows = w.out[0] * w.out[1];
  const int64_t row_bytes = k * w.out[2] * static_cast<int64_t>(sizeof(float));
  const int64_t by_budget = kIm2colBlockBytes / std::max<int64_t>(row_bytes, 1);
  const int64_t by_columns = (kIm2colMinColumns + w.out[2] - 1) / w.out[2];
  return std::clamp<int64_t>(std::max(by_budget, by_columns), 1, rows);
}

ConvShape conv_shape(const Graph& g, const Node& node) {
  const Shape& x = g.value(node.inputs.at(0)).shape;
  const Shape& weights = g.value(node.inputs.at(1)).shape;
  const Shape& y = g.value(node.outputs.at(0)).shape;
  if (weights.size() != x.size())
    fail("node {}: weights of rank {} for input of rank {}", node.label(), weights.size(), x.size());
  ConvShape s{.w = window(node, x, y, std::vector<int64_t>(weights.begin() + 2, weights.end())),
              .batch = x[0],
              .channels = x[1],
              .maps = weights[0],
              .group = node.int_attr("group", 1),
              .cg = weights[1],
              .mg = 0};
  if (s.group < 1 || s.channels != s.cg * s.group || s.maps % s.group != 0 || y[1] != s.maps)
    fail("node {}: group {} does not fit {} input channels, weights {}", node.label(), s.group, s.channels,
         shape_to_string(weights));
  if (node.has_attr("kernel_shape") &&
      node.ints_attr("kernel_shape") != std::vector<int64_t>(weights.begin() + 2, weights.end()))
    fail("node {}: kernel_shape does not match the weights", node.label());
  s.mg = s.maps / s.group;
  return s;
}

}  // namespace memledger
