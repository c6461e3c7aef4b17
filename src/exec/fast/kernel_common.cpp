#include "exec/fast/kernel_common.h"

#include <algorithm>

namespace memledger::exec::fast {

FastKernel fast_kernel(const Graph& g, const Node& n) {
  const OpRecord* record = find_op(n, g.opset);
  return record ? record->fast : FastKernel::kNone;
}

const Value& in_value(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || !n.inputs[i].valid()) not_fast(fmt::format("input {} missing", i));
  return g.value(n.inputs[i]);
}
const Value& out_value(const Graph& g, const Node& n) { return g.value(n.outputs.at(0)); }
bool has_in(const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i].valid(); }

void require_f32(const Value& v) {
  if (v.dtype != DType::kFloat32) not_fast(fmt::format("'{}' is {}", v.name, dtype_name(v.dtype)));
}

memory::dims all_f32_dims(const Value& v) {
  require_f32(v);
  return to_dims(v.shape);
}

std::vector<int64_t> sized_attr(const Node& n, const char* key, int64_t fallback, size_t count) {
  std::vector<int64_t> v = n.ints_attr(key, std::vector<int64_t>(count, fallback));
  if (v.size() != count) not_fast(fmt::format("attribute '{}' has {} values", key, v.size()));
  return v;
}

Window forward_window(const Node& n, const Shape& x, const Shape& y, const std::vector<int64_t>& kernel) {
  const size_t spatial = x.size() - 2;
  if (kernel.size() != spatial) not_fast("kernel rank");
  Window w;
  w.kernel = kernel;
  w.strides = sized_attr(n, "strides", 1, spatial);
  w.dilations = sized_attr(n, "dilations", 1, spatial);
  const auto pads = sized_attr(n, "pads", 0, 2 * spatial);
  const std::string auto_pad = n.string_attr("auto_pad", "NOTSET");
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t ext = (kernel[i] - 1) * w.dilations[i] + 1;
    int64_t pl = 0;
    if (auto_pad == "NOTSET") {
      pl = pads[i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, (y[2 + i] - 1) * w.strides[i] + ext - x[2 + i]);
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad != "VALID") {
      not_fast("auto_pad " + auto_pad);
    }
    w.pad_l.push_back(pl);
    w.pad_r.push_back((y[2 + i] - 1) * w.strides[i] + ext - x[2 + i] - pl);
  }
  return w;
}

memory::dims dnnl_dilations(const memory::dims& onnx) {
  memory::dims d;
  for (int64_t v : onnx) d.push_back(v - 1);
  return d;
}

memory::desc strided_desc(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, dt::f32, strides);
}

bool channels_last(const PrepareOptions& options, ValueId v) {
  return options.channels_last && v.valid() && (*options.channels_last)[static_cast<size_t>(v.index)] != 0;
}

memory::desc act_desc(const memory::dims& dims, bool cl, dt type) {
  if (cl && dims.size() == 4) return memory::desc(dims, type, memory::format_tag::nhwc);
  return plain_desc(dims, type);
}

int64_t node_axis(const Node& n, int64_t fallback, int64_t rank) {
  const int64_t axis = n.int_attr("axis", fallback);
  if (axis < -rank || axis >= rank) not_fast("axis");
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> constant_ints(const Graph& g, const Node& n, size_t i) {
  if (!has_in(n, i)) return {};
  const Value& v = g.value(n.inputs[i]);
  if (!v.is_constant() || (v.dtype != DType::kInt64 && v.dtype != DType::kInt32)) not_fast("non-constant indices");
  std::vector<int64_t> values;
  for (int64_t k = 0; k < v.constant->elements(); ++k)
    values.push_back(static_cast<int64_t>(v.constant->element_as_double(k)));
  return values;
}

bool plain_strided(const memory::desc& d) {
  return d.data.format_kind == dnnl_blocked && d.data.format_desc.blocking.inner_nblks == 0 && d.data.offset0 == 0;
}

bool has_empty_tensor(const Graph& g, const Node& n) {
  for (const auto& list : {n.inputs, n.outputs})
    for (ValueId v : list)
      if (v.valid() && !g.value(v).shape.empty() && element_count(g.value(v).shape, g.value(v).name) == 0) return true;
  return false;
}

float constant_scalar(const Graph& g, const Node& n, size_t i, float fallback) {
  if (!has_in(n, i)) return fallback;
  const Value& v = g.value(n.inputs[i]);
  if (!v.is_constant() || v.dtype != DType::kFloat32 || v.constant->elements() != 1)
    not_fast(fmt::format("input {} is not a constant float scalar", i));
  return static_cast<float>(v.constant->element_as_double(0));
}

}  // namespace memledger::exec::fast
