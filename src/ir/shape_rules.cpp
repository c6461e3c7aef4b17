// The op table's shape rules, by family. Every attribute a rule reads is checked here,
// with an Error naming the node and the field: these checks are what keeps a hostile file
// from crashing or stalling whatever computes with the shapes afterwards.
#include "ir/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "memledger/core/checked.h"
#include "memledger/ir/slice_ranges.h"

namespace memledger {

const TensorType& ShapeInputs::type(size_t i) const {
  if (!has(i)) fail("input {} is missing", i);
  return *types[i];
}

namespace {
// More constant elements than this are not a shape operand.
constexpr int64_t kMaxOperandElements = int64_t{1} << 16;
bool is_integer(DType t) { return !dtype_is_float(t); }  // bool counts: Compress's condition
}  // namespace

std::optional<std::vector<int64_t>> ShapeInputs::ints(size_t i, std::string_view field) const {
  if (!has(i)) return std::nullopt;
  const Tensor* v = values[i];
  if (!v) not_static("input '{}' is not a constant, so the output's shape is not static", field);
  if (!is_integer(v->dtype())) fail("input '{}' is {}, not an integer tensor", field, dtype_name(v->dtype()));
  if (v->elements() > kMaxOperandElements)
    fail("input '{}' has {} elements, more than a shape operand has", field, v->elements());
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(v->elements()));
  for (int64_t k = 0; k < v->elements(); ++k) {
    if (v->dtype() == DType::kInt64)
      out.push_back(v->data<int64_t>()[static_cast<size_t>(k)]);
    else
      out.push_back(static_cast<int64_t>(v->element_as_double(k)));
  }
  return out;
}

std::optional<std::vector<double>> ShapeInputs::floats(size_t i, std::string_view field) const {
  if (!has(i)) return std::nullopt;
  const Tensor* v = values[i];
  if (!v) not_static("input '{}' is not a constant, so the output's shape is not static", field);
  if (v->elements() > kMaxOperandElements)
    fail("input '{}' has {} elements, more than a shape operand has", field, v->elements());
  std::vector<double> out;
  for (int64_t k = 0; k < v->elements(); ++k) out.push_back(v->element_as_double(k));
  return out;
}

namespace shape_rules {
namespace {

using Types = std::vector<TensorType>;

// The largest stride, dilation, kernel extent or pad accepted: far beyond any real model,
// small enough that output-size arithmetic cannot overflow.
constexpr int64_t kMaxWindowValue = int64_t{1} << 31;

// `axis` of an operand of rank `rank`, negative counted from the end; `extra` widens the
// range for operators that insert an axis (Unsqueeze, Flatten's rank itself).
int64_t axis_of(const ShapeInputs& in, int64_t axis, int64_t rank, std::string_view field, int64_t extra = 0) {
  const int64_t n = rank + extra;
  if (axis < -n || axis >= n) in.fail("{} {} is out of range for rank {}", field, axis, rank);
  return axis < 0 ? axis + n : axis;
}

Types one(DType dtype, Shape shape) { return {TensorType{dtype, std::move(shape)}}; }

// The outputs `in` names, each `t` (operators whose optional outputs copy the main one).
Types repeat(const ShapeInputs& in, const TensorType& t) { return Types(std::max<size_t>(in.outputs, 1), t); }

Shape broadcast_all(const ShapeInputs& in) {
  Shape out;
  bool first = true;
  for (size_t i = 0; i < in.count(); ++i) {
    if (!in.has(i)) continue;
    if (first) {
      out = in.shape(i);
      first = false;
      continue;
    }
    const Shape& s = in.shape(i);
    const size_t rank = std::max(out.size(), s.size());
    Shape r(rank, 1);
    for (size_t k = 0; k < rank; ++k) {
      const int64_t a = k + out.size() >= rank ? out[k + out.size() - rank] : 1;
      const int64_t b = k + s.size() >= rank ? s[k + s.size() - rank] : 1;
      if (a != b && a != 1 && b != 1)
        in.fail("operands {} and {} do not broadcast (axis {}: {} vs {})", shape_to_string(out), shape_to_string(s), k,
                a, b);
      r[k] = a == 1 ? b : a;
    }
    out = std::move(r);
  }
  if (first) in.fail("has no inputs");
  return out;
}

DType dtype_from_code(const ShapeInputs& in, int64_t code, std::string_view field) {
  const auto t = dtype_from_onnx_code(static_cast<int>(code));
  if (!t) in.fail("{} {} is not a supported element type", field, code);
  return *t;
}

}  // namespace

// ---- elementwise, one operand ----

Types same(const ShapeInputs& in) { return repeat(in, in.type(0)); }

Types to_bool(const ShapeInputs& in) { return one(DType::kBool, in.shape(0)); }

Types cast(const ShapeInputs& in) {
  if (!in.node.has_attr("to")) in.fail("attribute 'to' is required");
  return one(dtype_from_code(in, in.node.int_attr("to", 0), "to"), in.shape(0));
}

Types cast_like(const ShapeInputs& in) { return one(in.type(1).dtype, in.shape(0)); }

Types quantize(const ShapeInputs& in) { return one(in.has(2) ? in.type(2).dtype : DType::kUInt8, in.shape(0)); }

Types dequantize(const ShapeInputs& in) { return one(in.type(1).dtype, in.shape(0)); }

Types softmax(const ShapeInputs& in) {
  const int64_t rank = in.rank(0);
  axis_of(in, in.node.int_attr("axis", in.opset >= 13 ? -1 : 1), std::max<int64_t>(rank, 1), "axis");
  return same(in);
}

Types dropout(const ShapeInputs& in) {
  Types out{in.type(0)};
  // The mask is bool from opset 10; before, it had the data's type.
  if (in.outputs > 1) out.push_back({in.opset >= 10 ? DType::kBool : in.type(0).dtype, in.shape(0)});
  return out;
}

Types batch_norm(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  if (x.size() < 2 && in.outputs > 1) in.fail("input of rank {} has no channel axis", x.size());
  Types out{in.type(0)};
  for (size_t o = 1; o < in.outputs; ++o) out.push_back({in.type(0).dtype, {x[1]}});
  return out;
}

Types layer_norm(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const int64_t axis = axis_of(in, in.node.int_attr("axis", -1), static_cast<int64_t>(x.size()), "axis");
  Types out{in.type(0)};
  Shape stat = x;
  for (size_t a = static_cast<size_t>(axis); a < stat.size(); ++a) stat[a] = 1;
  const DType stash = in.node.int_attr("stash_type", 1) == 1 ? DType::kFloat32 : in.type(0).dtype;
  for (size_t o = 1; o < in.outputs; ++o) out.push_back({stash, stat});
  return out;
}

Types eye_like(const ShapeInputs& in) {
  if (in.rank(0) != 2) in.fail("input has rank {}; EyeLike needs a matrix", in.rank(0));
  const DType t =
      in.node.has_attr("dtype") ? dtype_from_code(in, in.node.int_attr("dtype", 1), "dtype") : in.type(0).dtype;
  return one(t, in.shape(0));
}

// ---- broadcasting ----

Types broadcast(const ShapeInputs& in) { return one(in.type(0).dtype, broadcast_all(in)); }

Types broadcast_bool(const ShapeInputs& in) { return one(DType::kBool, broadcast_all(in)); }

Types where(const ShapeInputs& in) {
  if (in.type(1).dtype != in.type(2).dtype)
    in.fail("X is {} and Y is {}; they must have one element type", dtype_name(in.type(1).dtype),
            dtype_name(in.type(2).dtype));
  return one(in.type(1).dtype, broadcast_all(in));
}

// ---- reductions ----

namespace {
Types reduce_over(const ShapeInputs& in, bool axes_input) {
  const Shape& x = in.shape(0);
  const auto rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = in.node.ints_attr("axes");
  if (axes_input) axes = in.ints(1, "axes").value_or(std::vector<int64_t>{});
  const bool keep = in.node.int_attr("keepdims", 1) != 0;
  if (axes.empty() && in.node.int_attr("noop_with_empty_axes", 0) != 0) return one(in.type(0).dtype, x);
  std::vector<char> reduced(x.size(), axes.empty() ? 1 : 0);
  for (int64_t a : axes) reduced[static_cast<size_t>(axis_of(in, a, rank, "axes"))] = 1;
  Shape out;
  for (size_t a = 0; a < x.size(); ++a) {
    if (!reduced[a])
      out.push_back(x[a]);
    else if (keep)
      out.push_back(1);
  }
  return one(in.type(0).dtype, out);
}
}  // namespace

Types reduce(const ShapeInputs& in) { return reduce_over(in, false); }

Types reduce_sum(const ShapeInputs& in) { return reduce_over(in, in.opset >= 13); }

Types arg_reduce(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const int64_t axis = axis_of(in, in.node.int_attr("axis", 0), static_cast<int64_t>(x.size()), "axis");
  Shape out = x;
  if (in.node.int_attr("keepdims", 1) != 0)
    out[static_cast<size_t>(axis)] = 1;
  else
    out.erase(out.begin() + axis);
  return one(DType::kInt64, out);
}

// ---- windows ----

namespace {

// The window attributes of a Conv-like or pooling node over `spatial` axes, checked.
struct WindowAttributes {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
};

std::vector<int64_t> window_list(const ShapeInputs& in, const char* name, size_t count, int64_t fallback,
                                 bool positive) {
  std::vector<int64_t> v = in.node.ints_attr(name);
  for (size_t k = 0; k < v.size(); ++k) {
    if (positive && v[k] < 1) in.fail("{}[{}] is {}; it must be at least 1", name, k, v[k]);
    if (!positive && v[k] < 0) in.fail("{}[{}] is {}; it must not be negative", name, k, v[k]);
    if (v[k] > kMaxWindowValue) in.fail("{}[{}] is {}, more than {}", name, k, v[k], kMaxWindowValue);
  }
  if (v.empty()) return std::vector<int64_t>(count, fallback);
  if (v.size() != count) in.fail("{} has {} values for {} spatial axes", name, v.size(), count);
  return v;
}

WindowAttributes window_attributes(const ShapeInputs& in, const Shape& x, std::vector<int64_t> kernel) {
  if (x.size() < 3)
    in.fail("input {} has rank {}; {} needs N, C and at least one spatial axis", in.name(0), x.size(), in.node.op);
  const size_t n = x.size() - 2;
  WindowAttributes w;
  const std::vector<int64_t> stated = window_list(in, "kernel_shape", n, 0, true);
  if (!in.node.has_attr("kernel_shape")) {
    if (kernel.empty()) in.fail("attribute 'kernel_shape' is required");
    w.kernel = std::move(kernel);
  } else {
    w.kernel = stated;
  }
  if (w.kernel.size() != n) in.fail("kernel_shape has {} values for {} spatial axes", w.kernel.size(), n);
  for (size_t k = 0; k < n; ++k)
    if (w.kernel[k] < 1 || w.kernel[k] > kMaxWindowValue) in.fail("kernel extent {} is {}", k, w.kernel[k]);
  w.strides = window_list(in, "strides", n, 1, true);
  w.dilations = window_list(in, "dilations", n, 1, true);
  const std::vector<int64_t> pads = in.node.ints_attr("pads");
  if (!pads.empty() && pads.size() != 2 * n)
    in.fail("pads has {} values for {} spatial axes (2 per axis)", pads.size(), n);
  w.pads = window_list(in, "pads", 2 * n, 0, false);
  window_list(in, "output_padding", n, 0, false);
  w.auto_pad = in.node.string_attr("auto_pad", "NOTSET");
  if (w.auto_pad != "NOTSET" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER" && w.auto_pad != "VALID")
    in.fail("auto_pad '{}' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", w.auto_pad);
  return w;
}

// Output extents of a Conv or pool (ONNX's formula, as libonnx computes it).
std::vector<int64_t> window_out(const ShapeInputs& in, const Shape& x, const WindowAttributes& w, bool ceil_mode) {
  const size_t n = x.size() - 2;
  std::vector<int64_t> out(n);
  for (size_t k = 0; k < n; ++k) {
    const int64_t size = x[k + 2], s = w.strides[k];
    const int64_t eff_k = (w.kernel[k] - 1) * w.dilations[k] + 1;
    int64_t total = w.pads[k] + w.pads[k + n];
    if (w.auto_pad == "VALID") total = 0;
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      const int64_t residual = size % s;
      total = std::max<int64_t>(0, residual == 0 ? eff_k - s : eff_k - residual);
    }
    const int64_t eff_in = size + total;
    if (eff_in < eff_k)
      in.fail("the window of extent {} along spatial axis {} is larger than the padded input ({})", eff_k, k, eff_in);
    out[k] = (ceil_mode ? ceil_div(eff_in - eff_k, s) : (eff_in - eff_k) / s) + 1;
  }
  return out;
}

Types conv_like(const ShapeInputs& in, size_t x_input, size_t w_input, DType out_type) {
  const Shape& x = in.shape(x_input);
  const Shape& wt = in.shape(w_input);
  if (x.size() < 3)
    in.fail("input {} has rank {}; {} needs N, C and at least one spatial axis", in.name(x_input), x.size(),
            in.node.op);
  if (wt.size() != x.size()) in.fail("weights of rank {} for an input of rank {}", wt.size(), x.size());
  const WindowAttributes w = window_attributes(in, x, Shape(wt.begin() + 2, wt.end()));
  const int64_t group = in.node.int_attr("group", 1);
  if (group < 1) in.fail("group is {}; it must be at least 1", group);
  if (wt[0] % group != 0) in.fail("{} output maps are not a multiple of group {}", wt[0], group);
  if (checked_mul(wt[1], group, "channels") != x[1])
    in.fail("weights {} with group {} read {} channels but the input has {}", shape_to_string(wt), group, wt[1] * group,
            x[1]);
  Shape out{x[0], wt[0]};
  for (int64_t e : window_out(in, x, w, false)) out.push_back(e);
  return one(out_type, out);
}

}  // namespace

Types conv(const ShapeInputs& in) {
  Types out = conv_like(in, 0, 1, in.type(0).dtype);
  if (in.has(2)) {
    const Shape& b = in.shape(2);
    const int64_t maps = in.shape(1)[0];
    if (b.size() != 1 || b[0] != maps)
      in.fail("bias {} for {} output maps (it needs one value per map, [{}])", shape_to_string(b), maps, maps);
  }
  return out;
}

Types conv_integer(const ShapeInputs& in) { return conv_like(in, 0, 1, DType::kInt32); }

Types qlinear_conv(const ShapeInputs& in) { return conv_like(in, 0, 3, in.type(7).dtype); }

Types pool(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const WindowAttributes w = window_attributes(in, x, {});
  const bool ceil_mode = in.node.int_attr("ceil_mode", 0) != 0;
  Shape out{x[0], x[1]};
  for (int64_t e : window_out(in, x, w, ceil_mode)) out.push_back(e);
  Types types{{in.type(0).dtype, out}};
  if (in.outputs > 1) types.push_back({DType::kInt64, out});
  return types;
}

Types conv_transpose(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const Shape& wt = in.shape(1);
  if (x.size() < 3)
    in.fail("input {} has rank {}; ConvTranspose needs N, C and at least one spatial axis", in.name(0), x.size());
  if (wt.size() != x.size()) in.fail("weights of rank {} for an input of rank {}", wt.size(), x.size());
  const WindowAttributes w = window_attributes(in, x, Shape(wt.begin() + 2, wt.end()));
  const int64_t group = in.node.int_attr("group", 1);
  if (group < 1) in.fail("group is {}; it must be at least 1", group);
  if (wt[0] != x[1]) in.fail("weights {} for an input of {} channels", shape_to_string(wt), x[1]);
  const size_t n = x.size() - 2;
  const std::vector<int64_t> output_padding = window_list(in, "output_padding", n, 0, false);
  const std::vector<int64_t> output_shape = in.node.ints_attr("output_shape");
  Shape out{x[0], checked_mul(wt[1], group, "output maps")};
  if (!output_shape.empty()) {
    if (output_shape.size() != n && output_shape.size() != n + 2)
      in.fail("output_shape has {} values for {} spatial axes", output_shape.size(), n);
    for (size_t k = output_shape.size() - n; k < output_shape.size(); ++k) {
      if (output_shape[k] < 1 || output_shape[k] > kMaxWindowValue)
        in.fail("output_shape[{}] is {}", k, output_shape[k]);
      out.push_back(output_shape[k]);
    }
    return one(in.type(0).dtype, out);
  }
  for (size_t k = 0; k < n; ++k) {
    const int64_t s = w.strides[k];
    const int64_t eff_k = (w.kernel[k] - 1) * w.dilations[k] + 1;
    int64_t e;
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      e = checked_mul(x[k + 2], s, "node " + in.label + ": output extent");
    } else {
      const int64_t pads = w.auto_pad == "VALID" ? 0 : w.pads[k] + w.pads[k + n];
      e = checked_add(checked_mul(s, x[k + 2] - 1, "node " + in.label + ": output extent"),
                      output_padding[k] + eff_k - pads, "node " + in.label + ": output extent");
    }
    if (e < 1) in.fail("the output extent along spatial axis {} would be {}", k, e);
    out.push_back(e);
  }
  return one(in.type(0).dtype, out);
}

Types global_pool(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  if (x.size() < 3) in.fail("input {} has rank {}; {} needs N, C and a spatial axis", in.name(0), x.size(), in.node.op);
  Shape out(x.size(), 1);
  out[0] = x[0];
  out[1] = x[1];
  return one(in.type(0).dtype, out);
}

Types max_roi_pool(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const Shape& rois = in.shape(1);
  if (x.size() != 4 || rois.size() != 2) in.fail("needs an input of rank 4 and rois of rank 2");
  const std::vector<int64_t> pooled = window_list(in, "pooled_shape", 2, 0, true);
  if (!in.node.has_attr("pooled_shape")) in.fail("attribute 'pooled_shape' is required");
  return one(in.type(0).dtype, {rois[0], x[1], pooled[0], pooled[1]});
}

Types roi_align(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const Shape& rois = in.shape(1);
  if (x.size() != 4 || rois.size() != 2) in.fail("needs an input of rank 4 and rois of rank 2");
  const int64_t h = in.node.int_attr("output_height", 1), w = in.node.int_attr("output_width", 1);
  if (h < 1 || w < 1 || h > kMaxWindowValue || w > kMaxWindowValue)
    in.fail("output_height {} and output_width {} must be at least 1", h, w);
  return one(in.type(0).dtype, {rois[0], x[1], h, w});
}

Types max_unpool(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  if (const auto given = in.ints(2, "output_shape")) {
    if (given->size() != x.size())
      in.fail("output_shape has {} values for an input of rank {}", given->size(), x.size());
    for (int64_t e : *given)
      if (e < 0) in.fail("output_shape has a negative extent {}", e);
    return one(in.type(0).dtype, Shape(given->begin(), given->end()));
  }
  const WindowAttributes w = window_attributes(in, x, {});
  const size_t n = x.size() - 2;
  Shape out{x[0], x[1]};
  for (size_t k = 0; k < n; ++k) {
    const int64_t e = checked_mul(x[k + 2] - 1, w.strides[k], "node " + in.label + ": output extent") + w.kernel[k] -
                      w.pads[k] - w.pads[k + n];
    if (e < 1) in.fail("the output extent along spatial axis {} would be {}", k, e);
    out.push_back(e);
  }
  return one(in.type(0).dtype, out);
}

Types depth_to_space(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  if (x.size() != 4) in.fail("input has rank {}; DepthToSpace needs rank 4", x.size());
  const int64_t b = in.node.int_attr("blocksize", 0);
  if (b < 1 || b > kMaxWindowValue) in.fail("blocksize is {}; it must be at least 1", b);
  const int64_t bb = checked_mul(b, b, "blocksize");
  if (x[1] % bb != 0) in.fail("{} channels are not a multiple of blocksize² {}", x[1], bb);
  return one(in.type(0).dtype, {x[0], x[1] / bb, checked_mul(x[2], b, "height"), checked_mul(x[3], b, "width")});
}

Types space_to_depth(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  if (x.size() != 4) in.fail("input has rank {}; SpaceToDepth needs rank 4", x.size());
  const int64_t b = in.node.int_attr("blocksize", 0);
  if (b < 1 || b > kMaxWindowValue) in.fail("blocksize is {}; it must be at least 1", b);
  if (x[2] % b != 0 || x[3] % b != 0)
    in.fail("height {} and width {} are not multiples of blocksize {}", x[2], x[3], b);
  return one(in.type(0).dtype, {x[0], checked_mul(x[1], b * b, "channels"), x[2] / b, x[3] / b});
}

// ---- matrix products ----

namespace {

Shape matmul_shape(const ShapeInputs& in, Shape a, Shape b) {
  if (a.empty() || b.empty()) in.fail("MatMul operands must have rank at least 1");
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  if (a.back() != b[b.size() - 2]) in.fail("inner extents differ: {} × {}", shape_to_string(a), shape_to_string(b));
  const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  Shape out = broadcast_shapes(ab, bb, "node " + in.label + ": batch axes");
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  return out;
}

}  // namespace

Types matmul(const ShapeInputs& in) { return one(in.type(0).dtype, matmul_shape(in, in.shape(0), in.shape(1))); }

Types matmul_integer(const ShapeInputs& in) { return one(DType::kInt32, matmul_shape(in, in.shape(0), in.shape(1))); }

Types qlinear_matmul(const ShapeInputs& in) {
  return one(in.type(7).dtype, matmul_shape(in, in.shape(0), in.shape(3)));
}

Types gemm(const ShapeInputs& in) {
  const Shape& a = in.shape(0);
  const Shape& b = in.shape(1);
  if (a.size() != 2 || b.size() != 2) in.fail("A {} and B {} must be matrices", shape_to_string(a), shape_to_string(b));
  const bool ta = in.node.int_attr("transA", 0) != 0, tb = in.node.int_attr("transB", 0) != 0;
  const int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb)
    in.fail("inner extents differ: A {} and B {} (transA {}, transB {})", shape_to_string(a), shape_to_string(b), ta,
            tb);
  const Shape y{m, n};
  if (in.has(2)) {
    // C must broadcast to [M, N] in one direction: each of its trailing axes is 1 or equal.
    const Shape& c = in.shape(2);
    bool ok = c.size() <= 2;
    for (size_t i = 0; ok && i < c.size(); ++i) {
      const int64_t extent = c[c.size() - 1 - i], want = y[1 - i];
      ok = extent == 1 || extent == want;
    }
    if (!ok) in.fail("bias C {} does not broadcast to the output {}", shape_to_string(c), shape_to_string(y));
  }
  return one(in.type(0).dtype, y);
}

Types einsum(const ShapeInputs& in) {
  std::string eq;
  for (char c : in.node.string_attr("equation", "")) {
    if (c != ' ') eq += c;
  }
  if (eq.empty()) in.fail("attribute 'equation' is required");
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != in.count()) in.fail("equation '{}' has {} operands for {} inputs", eq, terms.size(), in.count());
  std::unordered_map<char, int64_t> extent;
  std::unordered_map<char, int> uses;
  Shape ellipsis;
  bool has_ellipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Shape& s = in.shape(i);
    const std::string& term = terms[i];
    const size_t dots = term.find("...");
    const size_t labels = term.size() - (dots == std::string::npos ? 0 : 3);
    if (labels > s.size() || (dots == std::string::npos && labels != s.size()))
      in.fail("equation term '{}' does not fit input {} of shape {}", term, i, shape_to_string(s));
    const size_t ellipsis_rank = s.size() - labels;
    size_t axis = 0;
    for (size_t k = 0; k < term.size(); ++k) {
      if (k == dots) {
        has_ellipsis = true;
        const Shape part(s.begin() + static_cast<int64_t>(axis),
                         s.begin() + static_cast<int64_t>(axis + ellipsis_rank));
        ellipsis = broadcast_shapes(ellipsis, part, "node " + in.label + ": ellipsis axes");
        axis += ellipsis_rank;
        k += 2;
        continue;
      }
      const char c = term[k];
      if (!std::isalpha(static_cast<unsigned char>(c))) in.fail("equation '{}' has label '{}'", eq, c);
      ++uses[c];
      auto [it, fresh] = extent.emplace(c, s[axis]);
      if (!fresh && it->second != s[axis]) {
        if (it->second == 1)
          it->second = s[axis];
        else if (s[axis] != 1)
          in.fail("label '{}' has extents {} and {}", c, it->second, s[axis]);
      }
      ++axis;
    }
  }
  Shape out;
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t k = 0; k < rhs.size(); ++k) {
      if (rhs.compare(k, 3, "...") == 0) {
        out.insert(out.end(), ellipsis.begin(), ellipsis.end());
        k += 2;
        continue;
      }
      const auto it = extent.find(rhs[k]);
      if (it == extent.end()) in.fail("output label '{}' appears in no input", rhs[k]);
      out.push_back(it->second);
    }
  } else {
    if (has_ellipsis) out = ellipsis;
    std::vector<char> once;
    for (const auto& [c, n] : uses)
      if (n == 1) once.push_back(c);
    std::sort(once.begin(), once.end());
    for (char c : once) out.push_back(extent[c]);
  }
  return one(in.type(0).dtype, out);
}

// ---- reshape family ----

Types reshape(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const std::vector<int64_t> target =
      in.opset >= 5 ? in.ints(1, "shape").value_or(std::vector<int64_t>{}) : in.node.ints_attr("shape");
  if (in.opset >= 5 && !in.has(1)) in.fail("input 'shape' is required");
  const bool allowzero = in.node.int_attr("allowzero", 0) != 0;
  const int64_t total = element_count(x, "node " + in.label + ": input");
  Shape out;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allowzero) {
      if (i >= x.size()) in.fail("shape[{}] is 0 (copy) but the input has rank {}", i, x.size());
      d = x[i];
    }
    if (d == -1) {
      if (infer >= 0) in.fail("shape has more than one -1");
      infer = static_cast<int>(i);
      out.push_back(1);
      continue;
    }
    if (d < 0) in.fail("shape[{}] is {}", i, d);
    out.push_back(d);
    known = checked_mul(known, d, "node " + in.label + ": shape");
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      in.fail("cannot infer the -1 of shape [{}] for {} elements", fmt::join(target, ","), total);
    out[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    in.fail("shape [{}] holds {} elements but the input {} has {}", fmt::join(target, ","), known, shape_to_string(x),
            total);
  }
  return one(in.type(0).dtype, out);
}

Types flatten(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const auto rank = static_cast<int64_t>(x.size());
  int64_t axis = in.node.int_attr("axis", 1);
  if (axis < -rank || axis > rank) in.fail("axis {} is out of range for rank {}", axis, rank);
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < rank; ++a)
    (a < axis ? outer : inner) = checked_mul(a < axis ? outer : inner, x[static_cast<size_t>(a)], "flatten");
  return one(in.type(0).dtype, {outer, inner});
}

namespace {
std::optional<std::vector<int64_t>> axes_of(const ShapeInputs& in) {
  if (in.opset >= 13) return in.ints(1, "axes");
  if (in.node.has_attr("axes")) return in.node.ints_attr("axes");
  return std::nullopt;
}
}  // namespace

Types squeeze(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const auto rank = static_cast<int64_t>(x.size());
  std::vector<char> drop(x.size(), 0);
  if (const auto axes = axes_of(in)) {
    for (int64_t a : *axes) {
      const int64_t k = axis_of(in, a, rank, "axes");
      if (x[static_cast<size_t>(k)] != 1)
        in.fail("axes names axis {} of extent {}; only extent 1 squeezes", k, x[static_cast<size_t>(k)]);
      drop[static_cast<size_t>(k)] = 1;
    }
  } else {
    for (size_t a = 0; a < x.size(); ++a) drop[a] = x[a] == 1;
  }
  Shape out;
  for (size_t a = 0; a < x.size(); ++a)
    if (!drop[a]) out.push_back(x[a]);
  return one(in.type(0).dtype, out);
}

Types unsqueeze(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const auto axes = axes_of(in);
  if (!axes) in.fail("axes are required");
  const auto rank = static_cast<int64_t>(x.size() + axes->size());
  std::vector<char> is_new(static_cast<size_t>(rank), 0);
  for (int64_t a : *axes) {
    const int64_t k = axis_of(in, a, rank, "axes");
    if (is_new[static_cast<size_t>(k)]) in.fail("axes names axis {} twice", k);
    is_new[static_cast<size_t>(k)] = 1;
  }
  Shape out;
  size_t next = 0;
  for (int64_t a = 0; a < rank; ++a) out.push_back(is_new[static_cast<size_t>(a)] ? 1 : x[next++]);
  return one(in.type(0).dtype, out);
}

// ---- concat, split ----

Types concat(const ShapeInputs& in) {
  if (!in.node.has_attr("axis")) in.fail("attribute 'axis' is required");
  const Shape& first = in.shape(0);
  const int64_t axis = axis_of(in, in.node.int_attr("axis", 0), static_cast<int64_t>(first.size()), "axis");
  Shape out = first;
  out[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < in.count(); ++i) {
    const Shape& s = in.shape(i);
    if (s.size() != first.size()) in.fail("input {} has rank {}, input 0 rank {}", i, s.size(), first.size());
    for (size_t a = 0; a < s.size(); ++a)
      if (static_cast<int64_t>(a) != axis && s[a] != first[a])
        in.fail("input {} {} and input 0 {} differ on axis {}", i, shape_to_string(s), shape_to_string(first), a);
    if (in.type(i).dtype != in.type(0).dtype)
      in.fail("input {} is {}, input 0 {}", i, dtype_name(in.type(i).dtype), dtype_name(in.type(0).dtype));
    out[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
  }
  return one(in.type(0).dtype, out);
}

Types split(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const int64_t axis = axis_of(in, in.node.int_attr("axis", 0), static_cast<int64_t>(x.size()), "axis");
  const int64_t extent = x[static_cast<size_t>(axis)];
  std::vector<int64_t> parts =
      in.opset >= 13 ? in.ints(1, "split").value_or(std::vector<int64_t>{}) : in.node.ints_attr("split");
  const auto outputs = static_cast<int64_t>(std::max<size_t>(in.outputs, 1));
  if (parts.empty()) {
    if (extent % outputs != 0)
      in.fail("axis {} of extent {} does not split evenly into {} outputs", axis, extent, outputs);
    parts.assign(static_cast<size_t>(outputs), extent / outputs);
  }
  if (static_cast<int64_t>(parts.size()) != outputs)
    in.fail("split has {} values for {} outputs", parts.size(), outputs);
  int64_t sum = 0;
  for (int64_t p : parts) {
    if (p < 0) in.fail("split has a negative part {}", p);
    sum = checked_add(sum, p, "split");
  }
  if (sum != extent) in.fail("split parts add up to {} but axis {} has extent {}", sum, axis, extent);
  Types out;
  for (int64_t p : parts) {
    Shape s = x;
    s[static_cast<size_t>(axis)] = p;
    out.push_back({in.type(0).dtype, s});
  }
  return out;
}

// ---- slice, gather ----

Types slice(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (in.opset >= 10) {
    // Steps first: a hostile step is refused even where the starts are not constant.
    if (in.has(4) && in.values[4]) steps = in.ints(4, "steps").value_or(std::vector<int64_t>{});
    if (std::string e = slice_step_error(steps); !e.empty()) in.fail("{}", e);
    starts = in.ints(1, "starts").value_or(std::vector<int64_t>{});
    ends = in.ints(2, "ends").value_or(std::vector<int64_t>{});
    axes = in.ints(3, "axes").value_or(std::vector<int64_t>{});
    steps = in.ints(4, "steps").value_or(std::vector<int64_t>{});
  } else {
    starts = in.node.ints_attr("starts");
    ends = in.node.ints_attr("ends");
    axes = in.node.ints_attr("axes");
  }
  const SliceRanges r = slice_ranges(x, starts, ends, std::move(axes), std::move(steps));
  if (!r.error.empty()) in.fail("{}", r.error);
  Shape out = x;
  for (const SliceRange& range : r.ranges) out[range.axis] = range.count;
  return one(in.type(0).dtype, out);
}

Types gather(const ShapeInputs& in) {
  const Shape& data = in.shape(0);
  if (data.empty()) in.fail("data must have rank at least 1");
  const int64_t axis = axis_of(in, in.node.int_attr("axis", 0), static_cast<int64_t>(data.size()), "axis");
  Shape out(data.begin(), data.begin() + axis);
  const Shape& indices = in.shape(1);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return one(in.type(0).dtype, out);
}

Types gather_elements(const ShapeInputs& in) {
  if (in.rank(0) != in.rank(1)) in.fail("data of rank {} and indices of rank {}", in.rank(0), in.rank(1));
  axis_of(in, in.node.int_attr("axis", 0), in.rank(0), "axis");
  return one(in.type(0).dtype, in.shape(1));
}

Types gather_nd(const ShapeInputs& in) {
  const Shape& data = in.shape(0);
  const Shape& indices = in.shape(1);
  const int64_t b = in.node.int_attr("batch_dims", 0);
  if (indices.empty() || data.empty()) in.fail("data and indices must have rank at least 1");
  const int64_t m = indices.back();
  if (b < 0 || b >= static_cast<int64_t>(std::min(data.size(), indices.size())))
    in.fail("batch_dims {} is out of range", b);
  if (m < 1 || m > static_cast<int64_t>(data.size()) - b)
    in.fail("indices' last extent {} is out of range for data of rank {} with batch_dims {}", m, data.size(), b);
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), data.begin() + b + m, data.end());
  return one(in.type(0).dtype, out);
}

Types compress(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const auto condition = in.ints(1, "condition");
  if (!condition) in.fail("input 'condition' is required");
  const int64_t kept = std::count_if(condition->begin(), condition->end(), [](int64_t v) { return v != 0; });
  if (!in.node.has_attr("axis")) return one(in.type(0).dtype, {kept});
  const int64_t axis = axis_of(in, in.node.int_attr("axis", 0), static_cast<int64_t>(x.size()), "axis");
  if (static_cast<int64_t>(condition->size()) > x[static_cast<size_t>(axis)])
    in.fail("condition has {} values for axis {} of extent {}", condition->size(), axis, x[static_cast<size_t>(axis)]);
  Shape out = x;
  out[static_cast<size_t>(axis)] = kept;
  return one(in.type(0).dtype, out);
}

Types one_hot(const ShapeInputs& in) {
  const Shape& indices = in.shape(0);
  const auto depth = in.floats(1, "depth");
  if (!depth || depth->size() != 1) in.fail("input 'depth' must be one value");
  const double d = (*depth)[0];
  if (!(d >= 1 && d <= static_cast<double>(kMaxWindowValue))) in.fail("depth {} is out of range", d);
  const auto rank = static_cast<int64_t>(indices.size());
  const int64_t axis = axis_of(in, in.node.int_attr("axis", -1), rank, "axis", 1);
  Shape out = indices;
  out.insert(out.begin() + axis, static_cast<int64_t>(d));
  return one(in.type(2).dtype, out);
}

Types top_k(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const int64_t axis = axis_of(in, in.node.int_attr("axis", -1), static_cast<int64_t>(x.size()), "axis");
  int64_t k;
  if (in.opset >= 10) {
    const auto v = in.ints(1, "K");
    if (!v || v->size() != 1) in.fail("input 'K' must be one value");
    k = (*v)[0];
  } else {
    k = in.node.int_attr("k", -1);
  }
  if (k < 0 || k > x[static_cast<size_t>(axis)])
    in.fail("k {} is out of range for axis {} of extent {}", k, axis, x[static_cast<size_t>(axis)]);
  Shape out = x;
  out[static_cast<size_t>(axis)] = k;
  return {{in.type(0).dtype, out}, {DType::kInt64, out}};
}

Types transpose(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  std::vector<int64_t> perm = in.node.ints_attr("perm");
  if (!in.node.has_attr("perm"))
    for (size_t a = x.size(); a-- > 0;) perm.push_back(static_cast<int64_t>(a));
  if (perm.size() != x.size()) in.fail("perm has {} values for an input of rank {}", perm.size(), x.size());
  std::vector<char> seen(perm.size(), 0);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)])
      in.fail("perm is not a permutation of 0..{}", static_cast<int64_t>(perm.size()) - 1);
    seen[static_cast<size_t>(p)] = 1;
    out.push_back(x[static_cast<size_t>(p)]);
  }
  return one(in.type(0).dtype, out);
}

// ---- pad, resize, tile, expand ----

Types pad(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const std::vector<int64_t> pads =
      in.opset >= 11 ? in.ints(1, "pads").value_or(std::vector<int64_t>{}) : in.node.ints_attr("pads");
  if (pads.size() != 2 * x.size())
    in.fail("pads has {} values for an input of rank {} (2 per axis)", pads.size(), x.size());
  Shape out = x;
  for (size_t a = 0; a < x.size(); ++a) {
    for (int64_t p : {pads[a], pads[a + x.size()]})
      if (p > kMaxWindowValue || p < -kMaxWindowValue) in.fail("pads value {} is out of range", p);
    out[a] = x[a] + pads[a] + pads[a + x.size()];
    if (out[a] < 0) in.fail("pads make axis {} of extent {} negative ({})", a, x[a], out[a]);
  }
  return one(in.type(0).dtype, out);
}

namespace {
// Upsample and Resize-10: X, scales; Resize-11+: X, roi, scales, sizes.
Types scaled(const ShapeInputs& in, bool upsample) {
  const Shape& x = in.shape(0);
  const bool old = upsample || in.opset < 11;
  std::optional<std::vector<double>> scales;
  if (upsample && in.opset < 9) {
    const auto it = in.node.attributes.find("scales");
    const auto* s = it == in.node.attributes.end() ? nullptr : std::get_if<std::vector<float>>(&it->second);
    if (!s) in.fail("attribute 'scales' is required");
    scales = std::vector<double>(s->begin(), s->end());
  } else {
    const size_t at = old ? 1 : 2;
    if (in.has(at) && in.values[at] && in.values[at]->elements() > 0) scales = in.floats(at, "scales");
  }
  if (!old && in.has(3) && (!scales || scales->empty())) {
    const auto sizes = in.ints(3, "sizes");
    if (sizes->size() != x.size()) in.fail("sizes has {} values for an input of rank {}", sizes->size(), x.size());
    for (int64_t e : *sizes)
      if (e < 0 || e > kMaxWindowValue) in.fail("sizes has an extent {} out of range", e);
    return one(in.type(0).dtype, Shape(sizes->begin(), sizes->end()));
  }
  if (!scales) in.not_static("neither scales nor sizes is given as a constant");
  if (scales->size() != x.size()) in.fail("scales has {} values for an input of rank {}", scales->size(), x.size());
  Shape out;
  for (size_t a = 0; a < x.size(); ++a) {
    const float s = static_cast<float>((*scales)[a]);
    if (!(s > 0) || !std::isfinite(s)) in.fail("scales[{}] is {}; it must be positive", a, s);
    const double e = std::floor(static_cast<double>(static_cast<float>(x[a]) * s));
    if (e > static_cast<double>(kMaxWindowValue)) in.fail("scales[{}] {} makes axis {} too large", a, s, a);
    out.push_back(static_cast<int64_t>(e));
  }
  return one(in.type(0).dtype, out);
}
}  // namespace

Types resize(const ShapeInputs& in) { return scaled(in, false); }

Types upsample(const ShapeInputs& in) { return scaled(in, true); }

Types tile(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const auto repeats = in.ints(1, "repeats");
  if (!repeats || repeats->size() != x.size())
    in.fail("repeats has {} values for an input of rank {}", repeats ? repeats->size() : 0, x.size());
  Shape out;
  for (size_t a = 0; a < x.size(); ++a) {
    if ((*repeats)[a] < 0) in.fail("repeats[{}] is {}", a, (*repeats)[a]);
    out.push_back(checked_mul(x[a], (*repeats)[a], "node " + in.label + ": repeats"));
  }
  return one(in.type(0).dtype, out);
}

Types expand(const ShapeInputs& in) {
  const auto shape = in.ints(1, "shape");
  if (!shape) in.fail("input 'shape' is required");
  for (int64_t d : *shape)
    if (d < 0) in.fail("shape has a negative extent {}", d);
  return one(in.type(0).dtype,
             broadcast_shapes(in.shape(0), Shape(shape->begin(), shape->end()), "node " + in.label + ": Expand"));
}

// ---- generators ----

Types shape_of(const ShapeInputs& in) {
  const auto rank = static_cast<int64_t>(in.shape(0).size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp(in.node.int_attr("start", 0)), end = clamp(in.node.int_attr("end", rank));
  return one(DType::kInt64, {std::max<int64_t>(0, end - start)});
}

Types size_of(const ShapeInputs& in) {
  (void)in.type(0);
  return one(DType::kInt64, {});
}

Types constant_of_shape(const ShapeInputs& in) {
  const auto shape = in.ints(0, "shape");
  if (!shape) in.fail("input 'shape' is required");
  DType t = DType::kFloat32;
  if (const auto it = in.node.attributes.find("value"); it != in.node.attributes.end()) {
    const Tensor* v = std::get_if<Tensor>(&it->second);
    if (!v || v->elements() != 1) in.fail("attribute 'value' must be a tensor of one element");
    t = v->dtype();
  }
  int64_t bytes = host_element_bytes(t);
  for (size_t k = 0; k < shape->size(); ++k) {
    const int64_t v = (*shape)[k];
    if (v < 0) in.fail("input 'shape'[{}] is {}; extents must not be negative", k, v);
    int64_t next;
    if (__builtin_mul_overflow(bytes, v, &next) || next > in.max_bytes)
      in.fail("input 'shape' [{}] makes a tensor of more than {} bytes (the import bound)", fmt::join(*shape, ", "),
              in.max_bytes);
    bytes = next;
  }
  return one(t, Shape(shape->begin(), shape->end()));
}

Types range(const ShapeInputs& in) {
  const auto start = in.floats(0, "start"), limit = in.floats(1, "limit"), delta = in.floats(2, "delta");
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    in.fail("start, limit and delta must be one value each");
  const double s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
  if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
    in.fail("delta is 0 or a bound is not finite");
  const double count = std::max(0.0, std::ceil((l - s) / d));
  if (count * host_element_bytes(in.type(0).dtype) > static_cast<double>(in.max_bytes))
    in.fail("start {}, limit {}, delta {} make {} elements, more than the import bound", s, l, d, count);
  return one(in.type(0).dtype, {static_cast<int64_t>(count)});
}

Types non_zero(const ShapeInputs& in) {
  const Tensor* v = in.has(0) ? in.values[0] : nullptr;
  if (!v) in.not_static("the input is not a constant, so the output's shape is not static");
  int64_t n = 0;
  for (int64_t i = 0; i < v->elements(); ++i) n += v->element_as_double(i) != 0;
  return one(DType::kInt64, {static_cast<int64_t>(in.shape(0).size()), n});
}

// ---- losses ----

Types nll_loss(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const Shape& target = in.shape(1);
  if (x.size() < 2 || target.size() + 1 != x.size())
    in.fail("input {} and target {} do not match", shape_to_string(x), shape_to_string(target));
  const std::string reduction = in.node.string_attr("reduction", "mean");
  if (reduction == "none") return one(in.type(0).dtype, target);
  if (reduction != "mean" && reduction != "sum") in.fail("reduction '{}' is not none, mean or sum", reduction);
  return one(in.type(0).dtype, {});
}

Types softmax_cross_entropy(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const Shape& labels = in.shape(1);
  if (x.size() < 2 || labels.size() + 1 != x.size())
    in.fail("scores {} and labels {} do not match", shape_to_string(x), shape_to_string(labels));
  const std::string reduction = in.node.string_attr("reduction", "mean");
  if (reduction != "none" && reduction != "mean" && reduction != "sum")
    in.fail("reduction '{}' is not none, mean or sum", reduction);
  Types out{{in.type(0).dtype, reduction == "none" ? labels : Shape{}}};
  if (in.outputs > 1) out.push_back(in.type(0));
  return out;
}

}  // namespace shape_rules
}  // namespace memledger
