// The TFLite operators that move elements without arithmetic: RESHAPE and SQUEEZE (the
// bytes as they are; nothing to do when the planner gave the output the input's bytes),
// CONCATENATION (int8 inputs whose quantization differs from the output's are rescaled as
// TFLite's ConcatenationWithScaling does: round(q · s_in / s_out + bias) in float), PAD
// (with the output's zero point for quantized types, as TFLite pads), TRANSPOSE,
// STRIDED_SLICE (begin / end masks, shrink_axis, offset; TFLite's StartForAxis and
// StopForAxis) and RESIZE_NEAREST_NEIGHBOR (NHWC; align_corners, half_pixel_centers as
// TFLite's GetNearestNeighbor). Output shapes are the file's; the kernels check them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "exec/tflite/common.h"
#include "exec/tflite/kernels.h"

namespace memledger::exec::tflite {
namespace {

int64_t element_bytes(DType t) { return dtype_bits(t) / 8; }

int64_t product(const Shape& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

std::string check_byte_types(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.outputs.empty()) return "needs an input and an output";
  const Value& x = g.value(n.inputs[0]);
  const Value& y = g.value(n.outputs[0]);
  if (x.dtype != y.dtype) return "output type differs from the input's";
  if (dtype_bits(x.dtype) % 8 != 0) return fmt::format("{} elements are not whole bytes", dtype_name(x.dtype));
  return {};
}

// ---- RESHAPE, SQUEEZE ----

std::string check_reshape(const Graph& g, const Node& n) {
  if (auto why = check_byte_types(g, n); !why.empty()) return why;
  if (product(g.value(n.inputs[0]).shape) != product(g.value(n.outputs[0]).shape)) return "element counts differ";
  return {};
}

void run_reshape(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const auto bytes = static_cast<size_t>(x.elements() * element_bytes(x.dtype));
  if (bytes != 0 && y.data != x.data) std::memmove(y.data, x.data, bytes);
}

// ---- CONCATENATION ----

int64_t concat_axis(const Node& n, int64_t rank) {
  const int64_t axis = n.int_attr("axis", 0);
  return axis < 0 ? axis + rank : axis;
}

std::string check_concatenation(const Graph& g, const Node& n) {
  if (auto why = check_byte_types(g, n); !why.empty()) return why;
  const Value& y = g.value(n.outputs[0]);
  const auto rank = static_cast<int64_t>(y.shape.size());
  const int64_t axis = concat_axis(n, rank);
  if (axis < 0 || axis >= rank) return fmt::format("axis {} for rank {}", n.int_attr("axis", 0), rank);
  if (fused_activation(n) != "NONE") return "a fused activation on CONCATENATION is not supported";
  int64_t total = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value& x = g.value(n.inputs[i]);
    if (x.dtype != y.dtype || static_cast<int64_t>(x.shape.size()) != rank)
      return fmt::format("input {} differs in type or rank", i);
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && x.shape[d] != y.shape[d]) return fmt::format("input {} differs off the axis", i);
    total += x.shape[axis];
    if (x.dtype == DType::kInt8 || x.dtype == DType::kUInt8) {
      if (auto why = check_per_tensor(g, n, i, false); !why.empty()) return why;
    }
  }
  if (total != y.shape[axis]) return "inputs do not add up to the output along the axis";
  if (y.dtype == DType::kInt8 || y.dtype == DType::kUInt8) return check_per_tensor(g, n, 0, true);
  return {};
}

void run_concatenation(KernelContext& ctx) {
  OutputView& y = ctx.out();
  const int64_t axis = concat_axis(ctx.node, y.rank());
  const int64_t eb = element_bytes(y.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.shape[d];
  for (int64_t d = axis + 1; d < y.rank(); ++d) inner *= y.shape[d];
  const bool quantized = y.dtype == DType::kInt8 || y.dtype == DType::kUInt8;
  const TensorQuant qo = quantized ? output_quant(ctx) : TensorQuant{};
  int64_t offset = 0;  // along the axis
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const InputView& x = ctx.in(i);
    const int64_t run = x.shape[axis] * inner;
    const TensorQuant qi = quantized ? input_quant(ctx, i) : TensorQuant{};
    const bool rescale = quantized && (qi.scale != qo.scale || qi.zero_point != qo.zero_point);
    for (int64_t o = 0; o < outer; ++o) {
      std::byte* dst = y.data + (o * y.shape[axis] * inner + offset * inner) * eb;
      const std::byte* src = x.data + o * run * eb;
      if (!rescale) {
        std::memcpy(dst, src, static_cast<size_t>(run * eb));
        continue;
      }
      const float scale = qi.scale / qo.scale;
      const float bias = static_cast<float>(-qi.zero_point) * scale;
      const QuantRange r = type_range(y.dtype);
      for (int64_t e = 0; e < run; ++e) {
        const int32_t q = y.dtype == DType::kInt8 ? static_cast<int32_t>(reinterpret_cast<const int8_t*>(src)[e])
                                                  : static_cast<int32_t>(reinterpret_cast<const uint8_t*>(src)[e]);
        const int32_t v = static_cast<int32_t>(std::round(static_cast<float>(q) * scale + bias)) + qo.zero_point;
        const int32_t c = std::clamp(v, r.lo, r.hi);
        if (y.dtype == DType::kInt8)
          reinterpret_cast<int8_t*>(dst)[e] = static_cast<int8_t>(c);
        else
          reinterpret_cast<uint8_t*>(dst)[e] = static_cast<uint8_t>(c);
      }
    }
    offset += x.shape[axis];
  }
}

// ---- PAD ----

std::string check_pad(const Graph& g, const Node& n) {
  if (auto why = check_byte_types(g, n); !why.empty()) return why;
  if (n.inputs.size() < 2) return "needs the paddings";
  const Value& x = g.value(n.inputs[0]);
  const Value& p = g.value(n.inputs[1]);
  if (p.shape != Shape{static_cast<int64_t>(x.shape.size()), 2}) return "the paddings must be [rank, 2]";
  const Value& y = g.value(n.outputs[0]);
  if (y.shape.size() != x.shape.size()) return "output rank differs from the input's";
  if (dtype_is_float(x.dtype) && x.dtype != DType::kFloat32) return fmt::format("{} input", dtype_name(x.dtype));
  if (!dtype_is_float(x.dtype) && x.dtype != DType::kInt32 && x.dtype != DType::kInt64)
    return check_per_tensor(g, n, 0, true);
  return {};
}

void run_pad(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const std::vector<int64_t> pads = read_ints(ctx.in(1));
  const int rank = x.rank();
  for (int d = 0; d < rank; ++d)
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0 || x.shape[d] + pads[2 * d] + pads[2 * d + 1] != y.shape[d])
      fail("node {}: paddings do not give the output's shape {}", ctx.node.label(), shape_to_string(y.shape));
  const int64_t eb = element_bytes(x.dtype);
  // Fill with the pad value, then copy the input in.
  const int64_t n = y.elements();
  if (y.dtype == DType::kInt8 || y.dtype == DType::kUInt8 || y.dtype == DType::kInt16) {
    const int32_t zp = output_quant(ctx).zero_point;
    for (int64_t i = 0; i < n; ++i) {
      if (y.dtype == DType::kInt8) y.as<int8_t>()[i] = static_cast<int8_t>(zp);
      if (y.dtype == DType::kUInt8) y.as<uint8_t>()[i] = static_cast<uint8_t>(zp);
      if (y.dtype == DType::kInt16) y.as<int16_t>()[i] = static_cast<int16_t>(zp);
    }
  } else {
    std::memset(y.data, 0, static_cast<size_t>(n * eb));
  }
  std::vector<int64_t> dst_strides = dense_strides(y.shape);
  int64_t base = 0;
  for (int d = 0; d < rank; ++d) base += pads[2 * d] * dst_strides[static_cast<size_t>(d)];
  strided_copy(y.data + base * eb, dst_strides, x.data, dense_strides(x.shape), x.shape, static_cast<int>(eb));
}

// ---- TRANSPOSE ----

std::string check_transpose(const Graph& g, const Node& n) {
  if (auto why = check_byte_types(g, n); !why.empty()) return why;
  if (n.inputs.size() < 2) return "needs the permutation";
  if (g.value(n.inputs[1]).shape != Shape{static_cast<int64_t>(g.value(n.inputs[0]).shape.size())})
    return "the permutation must have one entry per axis";
  return {};
}

void run_transpose(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const std::vector<int64_t> perm = read_ints(ctx.in(1));
  const std::vector<int64_t> src = dense_strides(x.shape);
  std::vector<int64_t> src_strides(perm.size());
  std::vector<bool> seen(perm.size(), false);
  for (size_t d = 0; d < perm.size(); ++d) {
    const int64_t p = normalize_axis(ctx.node, perm[d], x.rank());
    if (seen[static_cast<size_t>(p)] || y.shape[d] != x.shape[p])
      fail("node {}: permutation does not give the output's shape", ctx.node.label());
    seen[static_cast<size_t>(p)] = true;
    src_strides[d] = src[static_cast<size_t>(p)];
  }
  strided_copy(y.data, dense_strides(y.shape), x.data, src_strides, y.shape, static_cast<int>(element_bytes(x.dtype)));
}

// ---- STRIDED_SLICE ----

std::string check_strided_slice(const Graph& g, const Node& n) {
  if (auto why = check_byte_types(g, n); !why.empty()) return why;
  if (n.inputs.size() < 4) return "needs begin, end and strides";
  if (n.int_attr("ellipsis_mask", 0) != 0 || n.int_attr("new_axis_mask", 0) != 0)
    return "ellipsis_mask and new_axis_mask are not supported";
  return {};
}

void run_strided_slice(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const std::vector<int64_t> begin = read_ints(ctx.in(1)), end = read_ints(ctx.in(2)), strides = read_ints(ctx.in(3));
  const int rank = x.rank();
  if (static_cast<int>(begin.size()) != rank || end.size() != begin.size() || strides.size() != begin.size())
    fail("node {}: begin, end and strides need one entry per axis", ctx.node.label());
  const int64_t begin_mask = ctx.node.int_attr("begin_mask", 0), end_mask = ctx.node.int_attr("end_mask", 0);
  const int64_t shrink = ctx.node.int_attr("shrink_axis_mask", 0);
  const bool offset = ctx.node.int_attr("offset", 0) != 0;
  Shape extents(static_cast<size_t>(rank));
  std::vector<int64_t> src_strides(static_cast<size_t>(rank));
  const std::vector<int64_t> dense = dense_strides(x.shape);
  int64_t base = 0, elements = 1;
  for (int d = 0; d < rank; ++d) {
    const int64_t size = x.shape[d], stride = strides[static_cast<size_t>(d)];
    if (stride == 0) fail("node {}: stride 0 on axis {}", ctx.node.label(), d);
    int64_t start = begin[static_cast<size_t>(d)];
    int64_t stop = offset ? start + end[static_cast<size_t>(d)] : end[static_cast<size_t>(d)];
    if (begin_mask & (int64_t{1} << d)) start = stride > 0 ? 0 : size - 1;
    if (start < 0) start += size;
    start = stride > 0 ? std::clamp<int64_t>(start, 0, size) : std::clamp<int64_t>(start, -1, size - 1);
    if (shrink & (int64_t{1} << d)) {
      stop = start + 1;
    } else {
      if (end_mask & (int64_t{1} << d))
        stop = stride > 0 ? size : -1;
      else if (stop < 0)
        stop += size;
      stop = stride > 0 ? std::clamp<int64_t>(stop, 0, size) : std::clamp<int64_t>(stop, -1, size - 1);
    }
    const int64_t count = stride > 0 ? std::max<int64_t>(0, (stop - start + stride - 1) / stride)
                                     : std::max<int64_t>(0, (start - stop - stride - 1) / -stride);
    extents[static_cast<size_t>(d)] = count;
    elements *= count;
    src_strides[static_cast<size_t>(d)] = dense[static_cast<size_t>(d)] * stride;
    base += start * dense[static_cast<size_t>(d)];
  }
  if (elements != y.elements())
    fail("node {}: the slice has {} elements, the output {}", ctx.node.label(), elements, y.elements());
  if (elements == 0) return;
  const int64_t eb = element_bytes(x.dtype);
  strided_copy(y.data, dense_strides(extents), x.data + base * eb, src_strides, extents, static_cast<int>(eb));
}

// ---- RESIZE_NEAREST_NEIGHBOR ----

int64_t nearest(int64_t out, int64_t in_size, int64_t out_size, bool align_corners, bool half_pixel) {
  const float scale = (align_corners && out_size > 1)
                          ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                          : static_cast<float>(in_size) / static_cast<float>(out_size);
  const float offset = half_pixel ? 0.5f : 0.0f;
  const float pos = (static_cast<float>(out) + offset) * scale;
  int64_t v = std::min<int64_t>(
      align_corners ? static_cast<int64_t>(std::round(pos)) : static_cast<int64_t>(std::floor(pos)), in_size - 1);
  if (half_pixel) v = std::max<int64_t>(0, v);
  return v;
}

std::string check_resize(const Graph& g, const Node& n) {
  if (auto why = check_byte_types(g, n); !why.empty()) return why;
  const Value& x = g.value(n.inputs[0]);
  const Value& y = g.value(n.outputs[0]);
  if (x.shape.size() != 4 || y.shape.size() != 4) return "input and output must be 4-D (NHWC)";
  if (x.shape[0] != y.shape[0] || x.shape[3] != y.shape[3]) return "batch and channels must be kept";
  if (x.shape[1] <= 0 || x.shape[2] <= 0) return "the input is empty";
  return {};
}

void run_resize(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const bool align = ctx.node.int_attr("align_corners", 0) != 0;
  const bool half = ctx.node.int_attr("half_pixel_centers", 0) != 0;
  const int64_t eb = element_bytes(x.dtype);
  const int64_t n = x.shape[0], ih = x.shape[1], iw = x.shape[2], c = x.shape[3], oh = y.shape[1], ow = y.shape[2];
  const size_t pixel = static_cast<size_t>(c * eb);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int64_t iy = nearest(oy, ih, oh, align, half);
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t ix = nearest(ox, iw, ow, align, half);
        std::memcpy(y.data + ((b * oh + oy) * ow + ox) * c * eb, x.data + ((b * ih + iy) * iw + ix) * c * eb, pixel);
      }
    }
}

}  // namespace

void add_data_movement_kernels(KernelTable& t) {
  t.emplace_back("tflite:RESHAPE", Kernel{check_reshape, run_reshape});
  t.emplace_back("tflite:SQUEEZE", Kernel{check_reshape, run_reshape});
  t.emplace_back("tflite:CONCATENATION", Kernel{check_concatenation, run_concatenation});
  t.emplace_back("tflite:PAD", Kernel{check_pad, run_pad});
  t.emplace_back("tflite:TRANSPOSE", Kernel{check_transpose, run_transpose});
  t.emplace_back("tflite:STRIDED_SLICE", Kernel{check_strided_slice, run_strided_slice});
  t.emplace_back("tflite:RESIZE_NEAREST_NEIGHBOR", Kernel{check_resize, run_resize});
}

}  // namespace memledger::exec::tflite
