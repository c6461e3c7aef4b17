#include "ir/tflite_shape_rules.h"

#include <algorithm>

#include "memledger/core/checked.h"

namespace memledger::tflite_shapes {
namespace {

// The output extent of one spatial axis (TFLite's ComputeOutSize).
int64_t out_size(const ShapeInputs& in, const std::string& padding, int64_t size, int64_t filter, int64_t stride,
                 int64_t dilation, std::string_view axis) {
  if (stride < 1 || dilation < 1)
    in.fail("stride_{0} {1} and dilation_{0}_factor {2} must be at least 1", axis, stride, dilation);
  if (filter < 1 || filter > size + (int64_t{1} << 20))
    in.fail("filter extent {} along {} is not usable", filter, axis);
  const int64_t effective = checked_add(checked_mul(filter - 1, dilation, "filter extent"), 1, "filter extent");
  if (padding == "SAME") return (size + stride - 1) / stride;
  if (padding == "VALID") return size < effective ? 0 : (size - effective + stride) / stride;
  in.fail("padding '{}' is neither SAME nor VALID", padding);
}

const Shape& rank4(const ShapeInputs& in, size_t i, std::string_view what) {
  const Shape& s = in.shape(i);
  if (s.size() != 4) in.fail("{} {} is not 4-D", what, shape_to_string(s));
  return s;
}

std::vector<TensorType> conv_like(const ShapeInputs& in, bool depthwise) {
  const Shape& x = rank4(in, 0, "input");
  const Shape& f = rank4(in, 1, "filter");
  const std::string padding = in.node.string_attr("padding", "SAME");
  if (depthwise) {
    if (f[0] != 1) in.fail("depthwise filter {} is not [1, H, W, O]", shape_to_string(f));
    if (x[3] == 0 || f[3] % x[3] != 0)
      in.fail("depthwise filter's {} outputs are not a multiple of the input's {} channels", f[3], x[3]);
  } else if (f[3] == 0 || x[3] % f[3] != 0) {
    in.fail("filter {} reads {} channels, which do not divide the input's {}", shape_to_string(f), f[3], x[3]);
  }
  if (in.has(2) && element_count(in.shape(2), "bias") != f[depthwise ? 3 : 0])
    in.fail("bias {} does not have one entry per output channel", shape_to_string(in.shape(2)));
  const int64_t h =
      out_size(in, padding, x[1], f[1], in.node.int_attr("stride_h", 1), in.node.int_attr("dilation_h_factor", 1), "h");
  const int64_t w =
      out_size(in, padding, x[2], f[2], in.node.int_attr("stride_w", 1), in.node.int_attr("dilation_w_factor", 1), "w");
  return {{in.type(0).dtype, {x[0], h, w, f[depthwise ? 3 : 0]}}};
}

std::vector<int64_t> constant_ints(const ShapeInputs& in, size_t i, std::string_view field) {
  auto v = in.ints(i, field);
  if (!v) in.fail("input {} ('{}') is missing", i, field);
  return *v;
}

int64_t normalized_axis(const ShapeInputs& in, int64_t axis, size_t rank, std::string_view field) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) in.fail("{} {} is outside rank {}", field, axis, rank);
  return axis < 0 ? axis + r : axis;
}

}  // namespace

std::vector<TensorType> conv_2d(const ShapeInputs& in) { return conv_like(in, false); }
std::vector<TensorType> depthwise_conv_2d(const ShapeInputs& in) { return conv_like(in, true); }

std::vector<TensorType> pool_2d(const ShapeInputs& in) {
  const Shape& x = rank4(in, 0, "input");
  const std::string padding = in.node.string_attr("padding", "SAME");
  const int64_t h =
      out_size(in, padding, x[1], in.node.int_attr("filter_height", 1), in.node.int_attr("stride_h", 1), 1, "h");
  const int64_t w =
      out_size(in, padding, x[2], in.node.int_attr("filter_width", 1), in.node.int_attr("stride_w", 1), 1, "w");
  return {{in.type(0).dtype, {x[0], h, w, x[3]}}};
}

std::vector<TensorType> fully_connected(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const Shape& wt = in.shape(1);
  if (wt.size() != 2) in.fail("weights {} are not [O, I]", shape_to_string(wt));
  const int64_t count = element_count(x, "input");
  if (wt[1] == 0 || count % wt[1] != 0)
    in.fail("input {} does not hold whole rows of the weights' {} inputs", shape_to_string(x), wt[1]);
  if (in.has(2) && element_count(in.shape(2), "bias") != wt[0])
    in.fail("bias {} does not have one entry per output", shape_to_string(in.shape(2)));
  if (in.node.int_attr("keep_num_dims", 0) != 0) {
    if (x.empty() || x.back() != wt[1]) in.fail("keep_num_dims: input's last extent is not {}", wt[1]);
    Shape out = x;
    out.back() = wt[0];
    return {{in.type(0).dtype, out}};
  }
  return {{in.type(0).dtype, {count / wt[1], wt[0]}}};
}

std::vector<TensorType> broadcast(const ShapeInputs& in) {
  return {{in.type(0).dtype, broadcast_shapes(in.shape(0), in.shape(1), "node " + in.label)}};
}

std::vector<TensorType> same_shape(const ShapeInputs& in) { return {in.type(0)}; }

std::vector<TensorType> reshape(const ShapeInputs& in) {
  std::vector<int64_t> target = in.node.ints_attr("new_shape");
  if (target.empty() && in.has(1)) target = constant_ints(in, 1, "shape");
  if (target.empty() && !in.node.has_attr("new_shape") && !in.has(1))
    in.not_static("neither new_shape nor a shape input says the output's shape");
  const int64_t count = element_count(in.shape(0), "input");
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1 && unknown < 0) {
      unknown = static_cast<int>(i);
    } else if (target[i] < 0) {
      in.fail("new_shape {} has more than one -1 or a negative extent", shape_to_string(target));
    } else {
      known = checked_mul(known, target[i], "new_shape");
    }
  }
  if (unknown >= 0) {
    if (known == 0 || count % known != 0)
      in.fail("new_shape {} cannot hold {} elements", shape_to_string(target), count);
    target[static_cast<size_t>(unknown)] = count / known;
  } else if (known != count) {
    in.fail("new_shape {} holds {} elements, the input {}", shape_to_string(target), known, count);
  }
  return {{in.type(0).dtype, target}};
}

std::vector<TensorType> squeeze(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  std::vector<char> drop(x.size(), 0);
  const std::vector<int64_t> dims = in.node.ints_attr("squeeze_dims");
  for (int64_t d : dims) {
    const int64_t a = normalized_axis(in, d, x.size(), "squeeze_dims");
    if (x[static_cast<size_t>(a)] != 1)
      in.fail("squeeze_dims names axis {} of extent {}", d, x[static_cast<size_t>(a)]);
    drop[static_cast<size_t>(a)] = 1;
  }
  Shape out;
  for (size_t a = 0; a < x.size(); ++a)
    if (!(dims.empty() ? x[a] == 1 : drop[a] != 0)) out.push_back(x[a]);
  return {{in.type(0).dtype, out}};
}

std::vector<TensorType> concatenation(const ShapeInputs& in) {
  Shape out = in.shape(0);
  const int64_t axis = normalized_axis(in, in.node.int_attr("axis", 0), out.size(), "axis");
  for (size_t i = 1; i < in.count(); ++i) {
    const Shape& s = in.shape(i);
    if (s.size() != out.size()) in.fail("input {} {} has another rank than input 0", i, shape_to_string(s));
    for (size_t a = 0; a < s.size(); ++a) {
      if (static_cast<int64_t>(a) == axis)
        out[a] = checked_add(out[a], s[a], "concatenated extent");
      else if (s[a] != out[a])
        in.fail("input {} {} differs from input 0 off the axis", i, shape_to_string(s));
    }
  }
  return {{in.type(0).dtype, out}};
}

std::vector<TensorType> mean(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  std::vector<char> reduced(x.size(), 0);
  for (int64_t a : constant_ints(in, 1, "axis"))
    reduced[static_cast<size_t>(normalized_axis(in, a, x.size(), "axis"))] = 1;
  const bool keep = in.node.int_attr("keep_dims", 0) != 0;
  Shape out;
  for (size_t a = 0; a < x.size(); ++a) {
    if (reduced[a] == 0)
      out.push_back(x[a]);
    else if (keep)
      out.push_back(1);
  }
  return {{in.type(0).dtype, out}};
}

std::vector<TensorType> pad(const ShapeInputs& in) {
  Shape out = in.shape(0);
  const std::vector<int64_t> p = constant_ints(in, 1, "paddings");
  if (p.size() != 2 * out.size()) in.fail("paddings have {} entries for rank {}", p.size(), out.size());
  for (size_t a = 0; a < out.size(); ++a) {
    if (p[2 * a] < 0 || p[2 * a + 1] < 0) in.fail("paddings of axis {} are negative", a);
    out[a] = checked_add(out[a], checked_add(p[2 * a], p[2 * a + 1], "paddings"), "padded extent");
  }
  return {{in.type(0).dtype, out}};
}

std::vector<TensorType> transpose(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const std::vector<int64_t> perm = constant_ints(in, 1, "perm");
  if (perm.size() != x.size()) in.fail("perm has {} entries for rank {}", perm.size(), x.size());
  std::vector<char> seen(x.size(), 0);
  Shape out;
  for (int64_t p : perm) {
    const auto a = static_cast<size_t>(normalized_axis(in, p, x.size(), "perm"));
    if (seen[a]++ != 0) in.fail("perm names axis {} twice", p);
    out.push_back(x[a]);
  }
  return {{in.type(0).dtype, out}};
}

std::vector<TensorType> resize_nearest(const ShapeInputs& in) {
  const Shape& x = rank4(in, 0, "input");
  const std::vector<int64_t> size = constant_ints(in, 1, "size");
  if (size.size() != 2 || size[0] < 1 || size[1] < 1) in.fail("size is not two positive extents");
  return {{in.type(0).dtype, {x[0], size[0], size[1], x[3]}}};
}

std::vector<TensorType> svdf(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  const Shape& feature = in.shape(1);
  const Shape& time = in.shape(2);
  if (x.size() != 2 || feature.size() != 2 || time.size() != 2)
    in.fail("input, weights_feature and weights_time must be 2-D");
  if (feature[1] != x[1])
    in.fail("weights_feature {} do not read the input's {} features", shape_to_string(feature), x[1]);
  if (time[0] != feature[0]) in.fail("weights_time {} has not one row per filter", shape_to_string(time));
  const int64_t rank = in.node.int_attr("rank", 1);
  if (rank < 1 || feature[0] % rank != 0) in.fail("rank {} does not divide the {} filters", rank, feature[0]);
  if (!in.has(4)) in.fail("the state input (input 4) is missing");
  const Shape& state = in.shape(4);
  if (element_count(state, "state") != checked_mul(checked_mul(x[0], time[1], "state"), feature[0], "state"))
    in.fail("state {} is not [batch, memory_size * num_filters]", shape_to_string(state));
  std::vector<TensorType> out{{in.type(0).dtype, {x[0], feature[0] / rank}}};
  if (in.outputs > 1) out.push_back(in.type(4));
  return out;
}

}  // namespace memledger::tflite_shapes
