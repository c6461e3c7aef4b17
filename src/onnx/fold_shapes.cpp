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

bool is_int_type(int64_t type) {
  return type == TensorProto::INT64 || type == TensorProto::INT32 || type == TensorProto::BOOL;
}

std::optional<IntTensor> from_proto(const TensorProto& t) {
  if (!is_int_type(t.data_type())) return std::nullopt;
  if (t.data_location() == TensorProto::EXTERNAL) return std::nullopt;
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxElements) return std::nullopt;
    count *= d;
  }
  if (count > kMaxElements) return std::nullopt;
  try {
    const Tensor tensor = tensor_from_proto(t, "shape constant '" + t.name() + "'");
    if (tensor.elements() > kMaxElements) return std::nullopt;
    IntTensor out{tensor.shape(), {}, t.data_type()};
    for (int64_t i = 0; i < tensor.elements(); ++i) {
      const auto k = static_cast<size_t>(i);
      out.values.push_back(t.data_type() == TensorProto::INT64 ? tensor.data<int64_t>()[k]
                           : t.data_type() == TensorProto::INT32
                               ? tensor.data<int32_t>()[k]
                               : static_cast<int64_t>(tensor.data<uint8_t>()[k] != 0));
    }
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

int64_t count_of(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Multidirectional broadcasting of small integer tensors: f(a, b) per output element, or
// nullopt when the shapes do not broadcast or f refuses an element.
template <typename F>
std::optional<IntTensor> broadcast(const std::vector<const IntTensor*>& in, int elem_type, F f) {
  size_t rank = 0;
  for (const IntTensor* t : in) rank = std::max(rank, t->dims.size());
  std::vector<int64_t> dims(rank, 1);
  for (const IntTensor* t : in)
    for (size_t i = 0; i < t->dims.size(); ++i) {
      int64_t& d = dims[rank - t->dims.size() + i];
      const int64_t e = t->dims[i];
      if (e == d || e == 1) continue;
      if (d != 1) return std::nullopt;
      d = e;
    }
  const int64_t total = count_of(dims);
  if (total > kMaxElements) return std::nullopt;
  IntTensor out{dims, {}, elem_type};
  std::vector<int64_t> index(rank, 0), args(in.size());
  for (int64_t e = 0; e < total; ++e) {
    for (size_t k = 0; k < in.size(); ++k) {
      const IntTensor& t = *in[k];
      int64_t flat = 0;
      for (size_t i = 0; i < t.dims.size(); ++i) {
        const size_t axis = rank - t.dims.size() + i;
        flat = flat * t.dims[i] + (t.dims[i] == 1 ? 0 : index[axis]);
      }
      args[k] = t.values[static_cast<size_t>(flat)];
    }
    const std::optional<int64_t> r = f(args);
    if (!r) return std::nullopt;
    out.values.push_back(*r);
    for (size_t axis = rank; axis-- > 0;) {
      if (++index[axis] < dims[axis]) break;
      index[axis] = 0;
    }
  }
  return out;
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
      if (node.op_type() == "Einsum") {
        folded += complete_einsum_shape(node) ? 1 : 0;
        continue;
      }
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
      if (!result || static_cast<int64_t>(result->values.size()) > kMaxElements) continue;
      if (result->values.empty()) {
        // Known to the nodes after it (a Concat with an empty part folds), but not
        // replaced: the node keeps feeding shape inference as it was.
        known_[node.output(0)] = *result;
        continue;
      }
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
      if (!x || !is_int_type(to)) return std::nullopt;
      IntTensor t = *x;
      t.elem_type = static_cast<int>(to);
      for (int64_t& v : t.values) {
        if (to == TensorProto::BOOL) v = v != 0;
        if (to == TensorProto::INT32) v = static_cast<int32_t>(v);
      }
      return t;
    }
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" || op == "Min" || op == "Max") {
      if (n.input_size() != 2 && !(op == "Min" || op == "Max")) return std::nullopt;
      std::vector<const IntTensor*> in;
      for (int i = 0; i < n.input_size(); ++i) {
        const IntTensor* x = input(n, i);
        if (!x || x->elem_type == TensorProto::BOOL || (!in.empty() && x->elem_type != in[0]->elem_type))
          return std::nullopt;
        in.push_back(x);
      }
      if (in.empty()) return std::nullopt;
      const bool fmod = attr_int(n, "fmod", 0) != 0;
      return broadcast(in, in[0]->elem_type, [&](const std::vector<int64_t>& v) -> std::optional<int64_t> {
        int64_t r = v[0];
        for (size_t k = 1; k < v.size(); ++k) {
          const int64_t x = r, y = v[k];
          if ((op == "Div" || op == "Mod") && (y == 0 || (x == INT64_MIN && y == -1))) return std::nullopt;
          if (op == "Add" && __builtin_add_overflow(x, y, &r)) return std::nullopt;
          if (op == "Sub" && __builtin_sub_overflow(x, y, &r)) return std::nullopt;
          if (op == "Mul" && __builtin_mul_overflow(x, y, &r)) return std::nullopt;
          if (op == "Div") r = x / y;
          if (op == "Mod") {
            r = x % y;  // fmod: the sign of the dividend; else the sign of the divisor
            if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
          }
          if (op == "Min") r = std::min(x, y);
          if (op == "Max") r = std::max(x, y);
        }
        return r;
      });
    }
    if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" ||
        op == "And" || op == "Or" || op == "Xor") {
      const IntTensor *a = input(n, 0), *b = input(n, 1);
      if (!a || !b || a->elem_type != b->elem_type) return std::nullopt;
      return broadcast({a, b}, TensorProto::BOOL, [&](const std::vector<int64_t>& v) -> std::optional<int64_t> {
        const int64_t x = v[0], y = v[1];
        if (op == "Equal") return x == y;
        if (op == "Less") return x < y;
        if (op == "Greater") return x > y;
        if (op == "LessOrEqual") return x <= y;
        if (op == "GreaterOrEqual") return x >= y;
        if (op == "And") return x && y;
        if (op == "Or") return x || y;
        return (x != 0) != (y != 0);
      });
    }
    if (op == "Not" || op == "Neg" || op == "Abs" || op == "Sign") {
      const IntTensor* x = input(n, 0);
      if (!x || ((op == "Not") != (x->elem_type == TensorProto::BOOL))) return std::nullopt;
      IntTensor t = *x;
      for (int64_t& v : t.values) {
        if (v == INT64_MIN && op != "Not" && op != "Sign") return std::nullopt;
        v = op == "Not" ? !v : op == "Neg" ? -v : op == "Abs" ? std::abs(v) : (v > 0) - (v < 0);
      }
      return t;
    }
    if (op == "Where") {
      const IntTensor *c = input(n, 0), *a = input(n, 1), *b = input(n, 2);
      if (!c || !a || !b || c->elem_type != TensorProto::BOOL || a->elem_type != b->elem_type) return std::nullopt;
      return broadcast({c, a, b}, a->elem_type,
                       [](const std::vector<int64_t>& v) -> std::optional<int64_t> { return v[0] ? v[1] : v[2]; });
    }
    if (op == "Size") {
      const auto it = n.input_size() > 0 ? shapes_.find(n.input(0)) : shapes_.end();
      if (it == shapes_.end()) return std::nullopt;
      return IntTensor{{}, {count_of(it->second)}, TensorProto::INT64};
    }
    if (op == "ConstantOfShape") {
      const IntTensor* shape = input(n, 0);
      if (!shape || shape->dims.size() != 1) return std::nullopt;
      IntTensor t{shape->values, {}, TensorProto::FLOAT};
      for (int64_t d : shape->values)
        if (d < 0 || d > kMaxElements) return std::nullopt;
      if (count_of(t.dims) > kMaxElements) return std::nullopt;
      int64_t value = 0;
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
          const auto v = from_proto(a.t());
          if (!v || v->values.size() != 1) return std::nullopt;
          t.elem_type = v->elem_type;
          value = v->values[0];
        }
      if (t.elem_type == TensorProto::FLOAT) return std::nullopt;  // the default is float 0
      t.values.assign(static_cast<size_t>(count_of(t.dims)), value);
      return t;
    }
    if (op == "Expand") {
      const IntTensor *x = input(n, 0), *shape = input(n, 1);
      if (!x || !shape || shape->dims.size() != 1) return std::nullopt;
      for (int64_t d : shape->values)
        if (d < 0 || d > kMaxElements) return std::nullopt;
      const IntTensor target{shape->values, std::vector<int64_t>(static_cast<size_t>(count_of(shape->values)), 0),
                             x->elem_type};
      if (count_of(shape->values) > kMaxElements) return std::nullopt;
      return broadcast({x, &target}, x->elem_type,
                       [](const std::vector<int64_t>& v) -> std::optional<int64_t> { return v[0]; });
    }
    if (op == "Reshape") {
      const IntTensor *x = input(n, 0), *shape = input(n, 1);
      if (!x || !shape || shape->dims.size() != 1 || attr_int(n, "allowzero", 0) != 0) return std::nullopt;
      std::vector<int64_t> dims;
      int infer = -1;
      int64_t known = 1;
      for (size_t i = 0; i < shape->values.size(); ++i) {
        int64_t d = shape->values[i];
        if (d == 0) {
          if (i >= x->dims.size()) return std::nullopt;
          d = x->dims[i];
        }
        if (d == -1) {
          if (infer >= 0) return std::nullopt;
          infer = static_cast<int>(i);
          d = 1;
        } else if (d < 0) {
          return std::nullopt;
        }
        dims.push_back(d);
        known *= std::max<int64_t>(d, 1);
      }
      const auto total = static_cast<int64_t>(x->values.size());
      if (infer >= 0) {
        if (known == 0 || total % known != 0) return std::nullopt;
        dims[static_cast<size_t>(infer)] = total / known;
      }
      if (count_of(dims) != total) return std::nullopt;
      IntTensor t = *x;
      t.dims = dims;
      return t;
    }
    if (op == "Range") {
      const IntTensor *start = input(n, 0), *limit = input(n, 1), *delta = input(n, 2);
      if (!start || !limit || !delta || start->values.size() != 1 || limit->values.size() != 1 ||
          delta->values.size() != 1 || delta->values[0] == 0 || start->elem_type == TensorProto::BOOL)
        return std::nullopt;
      const int64_t s = start->values[0], l = limit->values[0], d = delta->values[0];
      const int64_t count = std::max<int64_t>(0, d > 0 ? (l - s + d - 1) / d : (s - l - d - 1) / -d);
      if (count > kMaxElements) return std::nullopt;
      IntTensor t{{count}, {}, start->elem_type};
      for (int64_t i = 0; i < count; ++i) t.values.push_back(s + i * d);
      return t;
    }
    if (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") {
      const IntTensor* x = input(n, 0);
      if (!x || x->dims.size() != 1 || x->elem_type == TensorProto::BOOL) return std::nullopt;
      if (n.input_size() > 1 || attr_ints(n, "axes")) {
        const std::optional<std::vector<int64_t>> axes = attr_ints(n, "axes");
        if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
      }
      if (x->values.empty()) return std::nullopt;
      int64_t r = x->values[0];
      for (size_t i = 1; i < x->values.size(); ++i) {
        const int64_t v = x->values[i];
        if (op == "ReduceProd" && __builtin_mul_overflow(r, v, &r)) return std::nullopt;
        if (op == "ReduceSum" && __builtin_add_overflow(r, v, &r)) return std::nullopt;
        if (op == "ReduceMax") r = std::max(r, v);
        if (op == "ReduceMin") r = std::min(r, v);
      }
      IntTensor t{{}, {r}, x->elem_type};
      if (attr_int(n, "keepdims", 1) != 0) t.dims = {1};
      return t;
    }
    if (op == "Gather") {
      const IntTensor *data = input(n, 0), *indices = input(n, 1);
      if (!data || !indices || data->dims.empty()) return std::nullopt;
      const auto rank = static_cast<int64_t>(data->dims.size());
      int64_t axis = attr_int(n, "axis", 0);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return std::nullopt;
      if (rank > 1 && indices->dims.size() <= 1) {
        // Along another axis of a matrix: select, then drop the axis for a scalar index.
        std::vector<std::vector<int64_t>> picks(data->dims.size());
        for (size_t d = 0; d < data->dims.size(); ++d)
          for (int64_t i = 0; i < data->dims[d]; ++i) picks[d].push_back(i);
        const int64_t size = data->dims[static_cast<size_t>(axis)];
        picks[static_cast<size_t>(axis)].clear();
        for (int64_t i : indices->values) {
          if (i < 0) i += size;
          if (i < 0 || i >= size) return std::nullopt;
          picks[static_cast<size_t>(axis)].push_back(i);
        }
        IntTensor t = select(*data, picks);
        if (indices->dims.empty()) t.dims.erase(t.dims.begin() + axis);
        return t;
      }
      if (data->dims.size() != 1) return std::nullopt;
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
      if (axis != 0 && axis != -1) return concat_matrix(n, axis);
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
    if (op == "Transpose") {
      const IntTensor* x = input(n, 0);
      if (!x) return std::nullopt;
      return transpose(*x, attr_ints(n, "perm").value_or(std::vector<int64_t>{}));
    }
    return std::nullopt;
  }

  // libonnx 1.12 infers no extents for an Einsum whose equation has spaces or upper-case
  // labels (maxvit's "B G H I D, B G H J D -> B G H I J"): the output shape is worked out
  // here from the equation and the static input shapes, and stated in value_info.
  bool complete_einsum_shape(const NodeProto& n) {
    if (shapes_.count(n.output(0))) return false;
    std::string equation;
    for (const auto& a : n.attribute())
      if (a.name() == "equation") equation = a.s();
    std::string eq;
    for (char c : equation)
      if (c != ' ') eq += c;
    const auto arrow = eq.find("->");
    if (arrow == std::string::npos || eq.find("...") != std::string::npos) return false;
    std::unordered_map<char, int64_t> extent;
    size_t start = 0;
    for (int i = 0; i < n.input_size(); ++i) {
      const size_t comma = std::min(eq.find(',', start), arrow);
      const std::string term = eq.substr(start, comma - start);
      start = comma + 1;
      const auto it = shapes_.find(n.input(i));
      if (it == shapes_.end() || it->second.size() != term.size()) return false;
      for (size_t k = 0; k < term.size(); ++k) {
        int64_t& e = extent.emplace(term[k], it->second[k]).first->second;
        if (e == 1) e = it->second[k];
      }
    }
    std::vector<int64_t> dims;
    for (char c : eq.substr(arrow + 2)) {
      const auto it = extent.find(c);
      if (it == extent.end()) return false;
      dims.push_back(it->second);
    }
    onnx::ValueInfoProto* vi = nullptr;
    for (auto& v : *graph_.mutable_value_info())
      if (v.name() == n.output(0)) vi = &v;
    if (!vi) {
      vi = graph_.add_value_info();
      vi->set_name(n.output(0));
    }
    int elem_type = 0;
    for (const auto& v : graph_.value_info())
      if (v.name() == n.input(0)) elem_type = v.type().tensor_type().elem_type();
    for (const auto& v : graph_.input())
      if (v.name() == n.input(0)) elem_type = v.type().tensor_type().elem_type();
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    if (elem_type) tt->set_elem_type(elem_type);
    tt->mutable_shape()->clear_dim();
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    shapes_[n.output(0)] = dims;
    return true;
  }

  // Concat of rank ≥ 2 integer tensors along `axis`.
  std::optional<IntTensor> concat_matrix(const NodeProto& n, int64_t axis) const {
    std::vector<const IntTensor*> in;
    for (int i = 0; i < n.input_size(); ++i) {
      const IntTensor* x = input(n, i);
      if (!x || (!in.empty() && (x->dims.size() != in[0]->dims.size() || x->elem_type != in[0]->elem_type)))
        return std::nullopt;
      in.push_back(x);
    }
    if (in.empty()) return std::nullopt;
    const auto rank = static_cast<int64_t>(in[0]->dims.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    const auto a = static_cast<size_t>(axis);
    IntTensor t{in[0]->dims, {}, in[0]->elem_type};
    t.dims[a] = 0;
    for (const IntTensor* x : in) {
      for (size_t d = 0; d < x->dims.size(); ++d)
        if (d != a && x->dims[d] != in[0]->dims[d]) return std::nullopt;
      t.dims[a] += x->dims[a];
    }
    int64_t outer = 1;
    for (size_t d = 0; d < a; ++d) outer *= t.dims[d];
    for (int64_t o = 0; o < outer; ++o)
      for (const IntTensor* x : in) {
        const int64_t chunk = static_cast<int64_t>(x->values.size()) / std::max<int64_t>(outer, 1);
        t.values.insert(t.values.end(), x->values.begin() + o * chunk, x->values.begin() + (o + 1) * chunk);
      }
    return t;
  }

  // Slice of a small integer tensor along any axes: starts/ends/axes/steps as inputs
  // (opset 10+) or attributes.
  std::optional<IntTensor> slice(const NodeProto& n) const {
    const IntTensor* x = input(n, 0);
    if (!x) return std::nullopt;
    std::vector<int64_t> starts, ends, axes, steps;
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
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      return std::nullopt;
    const auto rank = static_cast<int64_t>(x->dims.size());
    std::vector<std::vector<int64_t>> picks(x->dims.size());
    for (size_t d = 0; d < x->dims.size(); ++d)
      for (int64_t i = 0; i < x->dims[d]; ++i) picks[d].push_back(i);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (a < 0 || a >= rank || steps[k] == 0) return std::nullopt;
      const int64_t size = x->dims[static_cast<size_t>(a)], step = steps[k];
      auto norm = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v < 0 ? v + size : v, lo, hi); };
      std::vector<int64_t> pick;
      if (step > 0) {
        for (int64_t i = norm(starts[k], 0, size), e = norm(ends[k], 0, size); i < e; i += step) pick.push_back(i);
      } else {
        for (int64_t i = norm(starts[k], -1, size - 1), e = norm(ends[k], -1, size - 1); i > e; i += step)
          pick.push_back(i);
      }
      picks[static_cast<size_t>(a)] = pick;
    }
    return select(*x, picks);
  }

  // The elements of x at every combination of per-axis indices (row-major).
  static IntTensor select(const IntTensor& x, const std::vector<std::vector<int64_t>>& picks) {
    IntTensor t{{}, {}, x.elem_type};
    for (const auto& p : picks) t.dims.push_back(static_cast<int64_t>(p.size()));
    const int64_t total = count_of(t.dims);
    std::vector<int64_t> strides(x.dims.size(), 1);
    for (size_t d = x.dims.size(); d-- > 1;) strides[d - 1] = strides[d] * x.dims[d];
    std::vector<size_t> index(picks.size(), 0);
    for (int64_t e = 0; e < total; ++e) {
      int64_t flat = 0;
      for (size_t d = 0; d < picks.size(); ++d) flat += picks[d][index[d]] * strides[d];
      t.values.push_back(x.values[static_cast<size_t>(flat)]);
      for (size_t d = picks.size(); d-- > 0;) {
        if (++index[d] < picks[d].size()) break;
        index[d] = 0;
      }
    }
    return t;
  }

  static std::optional<IntTensor> transpose(const IntTensor& x, std::vector<int64_t> perm) {
    const size_t rank = x.dims.size();
    if (perm.empty())
      for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    if (perm.size() != rank) return std::nullopt;
    std::vector<int64_t> strides(rank, 1);
    for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * x.dims[d];
    IntTensor t{{}, {}, x.elem_type};
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(rank)) return std::nullopt;
      t.dims.push_back(x.dims[static_cast<size_t>(p)]);
    }
    std::vector<int64_t> index(rank, 0);
    for (size_t e = 0; e < x.values.size(); ++e) {
      int64_t flat = 0;
      for (size_t d = 0; d < rank; ++d) flat += index[d] * strides[static_cast<size_t>(perm[d])];
      t.values.push_back(x.values[static_cast<size_t>(flat)]);
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < t.dims[d]) break;
        index[d] = 0;
      }
    }
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
        value.add_int32_data(static_cast<int32_t>(v));  // int32 and bool both live in int32_data
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
