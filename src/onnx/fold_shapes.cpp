#include "onnx/fold_shapes.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "memledger/core/error.h"
#include "onnx/proto_tensor.h"

namespace memledger::onnx_io {
namespace {

using onnx::NodeProto;
using onnx::TensorProto;

constexpr int64_t kMaxElements = 1024;

struct IntTensor {
  std::vector<int64_t> dims;
  std::vector<int64_t> values;
  int elem_type = TensorProto::INT64;
};

std::optional<IntTensor> from_proto(const TensorProto& t) {
  if (t.data_type() != TensorProto::INT64 && t.data_type() != TensorProto::INT32) return std::nullopt;
  if (t.data_location() == TensorProto::EXTERNAL) return std::nullopt;
  try {
    const Tensor tensor = tensor_from_proto(t, "shape constant '" + t.name() + "'");
    if (tensor.elements() > kMaxElements) return std::nullopt;
    IntTensor out{tensor.shape(), {}, t.data_type()};
    for (int64_t i = 0; i < tensor.elements(); ++i)
      out.values.push_back(t.data_type() == TensorProto::INT64 ? tensor.data<int64_t>()[static_cast<size_t>(i)]
                                                               : tensor.data<int32_t>()[static_cast<size_t>(i)]);
    return out;
  } catch (const Error&) {
    return std::nullopt;  // the importer reports bad tensors with its own message
  }
}

int64_t attr_int(const NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  return fallback;
}

std::optional<std::vector<int64_t>> attr_ints(const NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::INTS)
      return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return std::nullopt;
}

class Folder {
 public:
  explicit Folder(onnx::ModelProto& model) : graph_(*model.mutable_graph()) {
    for (const auto& entry : model.opset_import())
      if (entry.domain().empty() || entry.domain() == "ai.onnx") opset_ = entry.version();
    for (const auto& init : graph_.initializer())
      if (auto t = from_proto(init)) known_[init.name()] = *t;
    auto note_shape = [&](const onnx::ValueInfoProto& vi) {
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
      std::vector<int64_t> dims;
      for (const auto& d : vi.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value()) return;
        dims.push_back(d.dim_value());
      }
      shapes_[vi.name()] = dims;
    };
    for (const auto& vi : graph_.input()) note_shape(vi);
    for (const auto& vi : graph_.value_info()) note_shape(vi);
    for (const auto& vi : graph_.output()) note_shape(vi);
  }

  int run() {
    int folded = 0;
    for (auto& node : *graph_.mutable_node()) {
      if (!(node.domain().empty() || node.domain() == "ai.onnx") || node.output_size() != 1) continue;
      if (node.op_type() == "Constant") {
        for (const auto& a : node.attribute())
          if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR)
            if (auto t = from_proto(a.t())) known_[node.output(0)] = *t;
        continue;
      }
      std::optional<IntTensor> result;
      try {
        result = evaluate(node);
      } catch (const std::exception&) {
        result.reset();  // anything unexpected: leave the node to shape inference
      }
      // Empty results are left alone: libonnx 1.12's Concat inference mistakes a folded
      // [0]-shaped constant for a scalar (LayerNormalization's expanded function).
      if (!result || result->values.empty() || static_cast<int64_t>(result->values.size()) > kMaxElements) continue;
      replace_by_constant(node, *result);
      known_[node.output(0)] = *result;
      ++folded;
    }
    return folded;
  }

 private:
  const IntTensor* input(const NodeProto& n, int i) const {
    if (i >= n.input_size() || n.input(i).empty()) return nullptr;
    const auto it = known_.find(n.input(i));
    return it == known_.end() ? nullptr : &it->second;
  }

  std::optional<IntTensor> evaluate(const NodeProto& n) const {
    const std::string& op = n.op_type();
    if (op == "Shape") {
      const auto it = n.input_size() > 0 ? shapes_.find(n.input(0)) : shapes_.end();
      if (it == shapes_.end()) return std::nullopt;
      const auto rank = static_cast<int64_t>(it->second.size());
      auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
      const int64_t start = clamp(attr_int(n, "start", 0)), end = clamp(attr_int(n, "end", rank));
      IntTensor t;
      for (int64_t i = start; i < end; ++i) t.values.push_back(it->second[static_cast<size_t>(i)]);
      t.dims = {static_cast<int64_t>(t.values.size())};
      return t;
    }
    if (op == "Identity") {
      if (const IntTensor* x = input(n, 0)) return *x;
      return std::nullopt;
    }
    if (op == "Cast") {
      const IntTensor* x = input(n, 0);
      const int64_t to = attr_int(n, "to", 0);
      if (!x || (to != TensorProto::INT64 && to != TensorProto::INT32)) return std::nullopt;
      IntTensor t = *x;
      t.elem_type = static_cast<int>(to);
      return t;
    }
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      const IntTensor *a = input(n, 0), *b = input(n, 1);
      if (!a || !b || a->elem_type != b->elem_type) return std::nullopt;
      const size_t na = a->values.size(), nb = b->values.size();
      if (na != nb && na != 1 && nb != 1) return std::nullopt;
      if (na != nb && a->dims.size() > 1 && b->dims.size() > 1) return std::nullopt;
      IntTensor t{na >= nb ? a->dims : b->dims, {}, a->elem_type};
      if (na == nb && b->dims.size() > a->dims.size()) t.dims = b->dims;
      for (size_t i = 0; i < std::max(na, nb); ++i) {
        const int64_t x = a->values[na == 1 ? 0 : i], y = b->values[nb == 1 ? 0 : i];
        if (op == "Div" && y == 0) return std::nullopt;
        int64_t r = 0;
        if (op == "Add" && __builtin_add_overflow(x, y, &r)) return std::nullopt;
        if (op == "Sub" && __builtin_sub_overflow(x, y, &r)) return std::nullopt;
        if (op == "Mul" && __builtin_mul_overflow(x, y, &r)) return std::nullopt;
        if (op == "Div") {
          if (x == INT64_MIN && y == -1) return std::nullopt;
          r = x / y;
        }
        t.values.push_back(r);
      }
      return t;
    }
    if (op == "Gather") {
      const IntTensor *data = input(n, 0), *indices = input(n, 1);
      if (!data || !indices || data->dims.size() != 1 || attr_int(n, "axis", 0) != 0) return std::nullopt;
      const auto size = static_cast<int64_t>(data->values.size());
      IntTensor t{indices->dims, {}, data->elem_type};
      for (int64_t i : indices->values) {
        if (i < 0) i += size;
        if (i < 0 || i >= size) return std::nullopt;
        t.values.push_back(data->values[static_cast<size_t>(i)]);
      }
      return t;
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
      const IntTensor* x = input(n, 0);
      if (!x) return std::nullopt;
      std::optional<std::vector<int64_t>> axes = attr_ints(n, "axes");
      if (opset_ >= 13 && n.input_size() > 1 && !n.input(1).empty()) {
        const IntTensor* a = input(n, 1);
        if (!a) return std::nullopt;
        axes = a->values;
      }
      IntTensor t = *x;
      if (op == "Unsqueeze") {
        if (!axes) return std::nullopt;
        const auto rank = static_cast<int64_t>(x->dims.size() + axes->size());
        std::vector<char> is_new(static_cast<size_t>(rank), 0);
        for (int64_t a : *axes) {
          if (a < 0) a += rank;
          if (a < 0 || a >= rank || is_new[static_cast<size_t>(a)]) return std::nullopt;
          is_new[static_cast<size_t>(a)] = 1;
        }
        t.dims.clear();
        size_t next = 0;
        for (int64_t a = 0; a < rank; ++a) t.dims.push_back(is_new[static_cast<size_t>(a)] ? 1 : x->dims[next++]);
      } else {
        const auto rank = static_cast<int64_t>(x->dims.size());
        std::vector<char> drop(x->dims.size(), 0);
        if (axes) {
          for (int64_t a : *axes) {
            if (a < 0) a += rank;
            if (a < 0 || a >= rank || x->dims[static_cast<size_t>(a)] != 1) return std::nullopt;
            drop[static_cast<size_t>(a)] = 1;
          }
        } else {
          for (size_t a = 0; a < x->dims.size(); ++a) drop[a] = x->dims[a] == 1;
        }
        t.dims.clear();
        for (size_t a = 0; a < x->dims.size(); ++a)
          if (!drop[a]) t.dims.push_back(x->dims[a]);
      }
      return t;
    }
    if (op == "Concat") {
      const int64_t axis = attr_int(n, "axis", 0);
      if (axis != 0 && axis != -1) return std::nullopt;
      IntTensor t;
      for (int i = 0; i < n.input_size(); ++i) {
        const IntTensor* x = input(n, i);
        if (!x || x->dims.size() != 1) return std::nullopt;
        if (i == 0) t.elem_type = x->elem_type;
        t.values.insert(t.values.end(), x->values.begin(), x->values.end());
      }
      t.dims = {static_cast<int64_t>(t.values.size())};
      return t;
    }
    if (op == "Slice") return slice(n);
    return std::nullopt;
  }

  // A 1-D Slice (shape vectors): starts/ends/axes/steps as inputs (opset 10+) or attributes.
  std::optional<IntTensor> slice(const NodeProto& n) const {
    const IntTensor* x = input(n, 0);
    if (!x || x->dims.size() != 1) return std::nullopt;
    std::vector<int64_t> starts, ends, axes{0}, steps{1};
    if (opset_ >= 10) {
      const IntTensor *s = input(n, 1), *e = input(n, 2);
      if (!s || !e) return std::nullopt;
      starts = s->values;
      ends = e->values;
      if (n.input_size() > 3 && !n.input(3).empty()) {
        const IntTensor* a = input(n, 3);
        if (!a) return std::nullopt;
        axes = a->values;
      }
      if (n.input_size() > 4 && !n.input(4).empty()) {
        const IntTensor* st = input(n, 4);
        if (!st) return std::nullopt;
        steps = st->values;
      }
    } else {
      const auto s = attr_ints(n, "starts"), e = attr_ints(n, "ends");
      if (!s || !e) return std::nullopt;
      starts = *s;
      ends = *e;
      if (const auto a = attr_ints(n, "axes")) axes = *a;
    }
    if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1) return std::nullopt;
    if ((axes[0] != 0 && axes[0] != -1) || steps[0] == 0) return std::nullopt;
    const auto size = static_cast<int64_t>(x->values.size());
    const int64_t step = steps[0];
    auto norm = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v < 0 ? v + size : v, lo, hi); };
    IntTensor t{{}, {}, x->elem_type};
    if (step > 0) {
      for (int64_t i = norm(starts[0], 0, size), end = norm(ends[0], 0, size); i < end; i += step)
        t.values.push_back(x->values[static_cast<size_t>(i)]);
    } else {
      for (int64_t i = norm(starts[0], -1, size - 1), end = norm(ends[0], -1, size - 1); i > end; i += step)
        t.values.push_back(x->values[static_cast<size_t>(i)]);
    }
    t.dims = {static_cast<int64_t>(t.values.size())};
    return t;
  }

  static void replace_by_constant(NodeProto& node, const IntTensor& t) {
    TensorProto value;
    value.set_data_type(t.elem_type);
    for (int64_t d : t.dims) value.add_dims(d);
    for (int64_t v : t.values) {
      if (t.elem_type == TensorProto::INT64)
        value.add_int64_data(v);
      else
        value.add_int32_data(static_cast<int32_t>(v));
    }
    const std::string output = node.output(0);
    const std::string name = node.name();
    node.Clear();
    node.set_name(name);
    node.set_op_type("Constant");
    node.add_output(output);
    auto* attribute = node.add_attribute();
    attribute->set_name("value");
    attribute->set_type(onnx::AttributeProto::TENSOR);
    *attribute->mutable_t() = std::move(value);
  }

  onnx::GraphProto& graph_;
  int64_t opset_ = 0;
  std::unordered_map<std::string, IntTensor> known_;
  std::unordered_map<std::string, std::vector<int64_t>> shapes_;
};

}  // namespace

int fold_shape_computations(onnx::ModelProto& model) { return Folder(model).run(); }

}  // namespace memledger::onnx_io
