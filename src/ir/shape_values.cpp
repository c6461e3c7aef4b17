// The op table's value rules: operators evaluated on small integer constants (int64, int32,
// bool; at most kMaxFoldedElements), so that an exporter's shape computation (Shape →
// Gather → Concat → Reshape, Range → Expand ...) becomes constants at import and the
// shapes after it are static. A rule says nothing (nullopt) when an input is not such a
// constant or the arithmetic would overflow; the node then stays a node.
#include <algorithm>
#include <cstdlib>

#include "ir/shape_rules.h"
#include "memledger/ir/op_table.h"
#include "memledger/ir/slice_ranges.h"

namespace memledger::shape_rules {
namespace {

struct Ints {
  DType dtype = DType::kInt64;
  Shape dims;
  std::vector<int64_t> v;
};

bool int_like(DType t) { return t == DType::kInt64 || t == DType::kInt32 || t == DType::kBool; }

int64_t count_of(const Shape& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Input i as a small integer constant, or nothing.
std::optional<Ints> small(const ShapeInputs& in, size_t i) {
  if (!in.has(i) || !in.values[i]) return std::nullopt;
  const Tensor& t = *in.values[i];
  if (!int_like(t.dtype()) || t.elements() > kMaxFoldedElements) return std::nullopt;
  Ints out{t.dtype(), t.shape(), {}};
  for (int64_t k = 0; k < t.elements(); ++k) {
    const auto u = static_cast<size_t>(k);
    out.v.push_back(t.dtype() == DType::kInt64   ? t.data<int64_t>()[u]
                    : t.dtype() == DType::kInt32 ? t.data<int32_t>()[u]
                                                 : static_cast<int64_t>(t.data<uint8_t>()[u] != 0));
  }
  return out;
}

std::optional<Tensor> tensor(const Ints& x) {
  if (count_of(x.dims) != static_cast<int64_t>(x.v.size()) || count_of(x.dims) > kMaxFoldedElements)
    return std::nullopt;
  Tensor t(x.dtype, x.dims);
  for (size_t k = 0; k < x.v.size(); ++k) {
    if (x.dtype == DType::kInt64)
      t.data<int64_t>()[k] = x.v[k];
    else if (x.dtype == DType::kInt32)
      t.data<int32_t>()[k] = static_cast<int32_t>(x.v[k]);
    else
      t.data<uint8_t>()[k] = x.v[k] != 0;
  }
  return t;
}

// Multidirectional broadcasting: f(args) per output element, or nothing when f refuses one.
template <typename F>
std::optional<Tensor> broadcast(const std::vector<Ints>& in, DType out_type, F f) {
  size_t rank = 0;
  for (const Ints& t : in) rank = std::max(rank, t.dims.size());
  Shape dims(rank, 1);
  for (const Ints& t : in)
    for (size_t i = 0; i < t.dims.size(); ++i) {
      int64_t& d = dims[rank - t.dims.size() + i];
      const int64_t e = t.dims[i];
      if (e == d || e == 1) continue;
      if (d != 1) return std::nullopt;
      d = e;
    }
  const int64_t total = count_of(dims);
  if (total > kMaxFoldedElements) return std::nullopt;
  Ints out{out_type, dims, {}};
  std::vector<int64_t> index(rank, 0), args(in.size());
  for (int64_t e = 0; e < total; ++e) {
    for (size_t k = 0; k < in.size(); ++k) {
      const Ints& t = in[k];
      int64_t flat = 0;
      for (size_t i = 0; i < t.dims.size(); ++i) {
        const size_t axis = rank - t.dims.size() + i;
        flat = flat * t.dims[i] + (t.dims[i] == 1 ? 0 : index[axis]);
      }
      args[k] = t.v[static_cast<size_t>(flat)];
    }
    const std::optional<int64_t> r = f(args);
    if (!r) return std::nullopt;
    out.v.push_back(*r);
    for (size_t axis = rank; axis-- > 0;) {
      if (++index[axis] < dims[axis]) break;
      index[axis] = 0;
    }
  }
  return tensor(out);
}

// Every input present as a small integer constant of one type, or nothing.
std::optional<std::vector<Ints>> all_small(const ShapeInputs& in, bool allow_bool) {
  std::vector<Ints> out;
  for (size_t i = 0; i < in.count(); ++i) {
    auto x = small(in, i);
    if (!x || (!allow_bool && x->dtype == DType::kBool) || (!out.empty() && x->dtype != out[0].dtype))
      return std::nullopt;
    out.push_back(std::move(*x));
  }
  if (out.empty()) return std::nullopt;
  return out;
}

// The elements of x at every combination of per-axis indices (row-major).
Ints select(const Ints& x, const std::vector<std::vector<int64_t>>& picks) {
  Ints t{x.dtype, {}, {}};
  for (const auto& p : picks) t.dims.push_back(static_cast<int64_t>(p.size()));
  const int64_t total = count_of(t.dims);
  std::vector<int64_t> strides(x.dims.size(), 1);
  for (size_t d = x.dims.size(); d-- > 1;) strides[d - 1] = strides[d] * x.dims[d];
  std::vector<size_t> index(picks.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    int64_t flat = 0;
    for (size_t d = 0; d < picks.size(); ++d) flat += picks[d][index[d]] * strides[d];
    t.v.push_back(x.v[static_cast<size_t>(flat)]);
    for (size_t d = picks.size(); d-- > 0;) {
      if (++index[d] < picks[d].size()) break;
      index[d] = 0;
    }
  }
  return t;
}

std::vector<std::vector<int64_t>> every_index(const Shape& dims) {
  std::vector<std::vector<int64_t>> picks(dims.size());
  for (size_t d = 0; d < dims.size(); ++d)
    for (int64_t i = 0; i < dims[d]; ++i) picks[d].push_back(i);
  return picks;
}

}  // namespace

std::optional<Tensor> value_shape(const ShapeInputs& in) {
  const Shape& s = in.shape(0);
  const auto rank = static_cast<int64_t>(s.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp(in.node.int_attr("start", 0)), end = clamp(in.node.int_attr("end", rank));
  Ints t;
  for (int64_t i = start; i < end; ++i) t.v.push_back(s[static_cast<size_t>(i)]);
  t.dims = {static_cast<int64_t>(t.v.size())};
  return tensor(t);
}

std::optional<Tensor> value_size(const ShapeInputs& in) {
  return tensor(Ints{DType::kInt64, {}, {count_of(in.shape(0))}});
}

std::optional<Tensor> value_identity(const ShapeInputs& in) {
  const auto x = small(in, 0);
  return x ? tensor(*x) : std::nullopt;
}

std::optional<Tensor> value_cast(const ShapeInputs& in) {
  auto x = small(in, 0);
  const auto to = dtype_from_onnx_code(static_cast<int>(in.node.int_attr("to", 0)));
  if (!x || !to || !int_like(*to)) return std::nullopt;
  x->dtype = *to;
  for (int64_t& v : x->v) {
    if (*to == DType::kBool) v = v != 0;
    if (*to == DType::kInt32) v = static_cast<int32_t>(v);
  }
  return tensor(*x);
}

namespace {

// Add, Sub, Mul, Div, Mod, Min, Max over integers (never bool), refusing overflow and
// division by zero. Min and Max take any number of operands.
enum class Arith { kAdd, kSub, kMul, kDiv, kMod, kMin, kMax };

template <Arith f>
std::optional<Tensor> arithmetic(const ShapeInputs& in) {
  const bool variadic = f == Arith::kMin || f == Arith::kMax;
  if (in.count() != 2 && !variadic) return std::nullopt;
  const auto xs = all_small(in, false);
  if (!xs) return std::nullopt;
  const bool fmod = in.node.int_attr("fmod", 0) != 0;
  return broadcast(*xs, (*xs)[0].dtype, [&](const std::vector<int64_t>& v) -> std::optional<int64_t> {
    int64_t r = v[0];
    for (size_t k = 1; k < v.size(); ++k) {
      const int64_t x = r, y = v[k];
      if ((f == Arith::kDiv || f == Arith::kMod) && (y == 0 || (x == INT64_MIN && y == -1))) return std::nullopt;
      switch (f) {
        case Arith::kAdd:
          if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
          break;
        case Arith::kSub:
          if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
          break;
        case Arith::kMul:
          if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
          break;
        case Arith::kDiv:
          r = x / y;
          break;
        case Arith::kMod:
          r = x % y;  // fmod: the sign of the dividend; else the sign of the divisor
          if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
          break;
        case Arith::kMin:
          r = std::min(x, y);
          break;
        case Arith::kMax:
          r = std::max(x, y);
          break;
      }
    }
    return r;
  });
}

// Comparisons and logic: a bool result.
enum class Compare { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor };

template <Compare f>
std::optional<Tensor> compare(const ShapeInputs& in) {
  if (in.count() != 2) return std::nullopt;
  const auto xs = all_small(in, true);
  if (!xs) return std::nullopt;
  return broadcast(*xs, DType::kBool, [&](const std::vector<int64_t>& v) -> std::optional<int64_t> {
    const int64_t x = v[0], y = v[1];
    switch (f) {
      case Compare::kEqual:
        return x == y;
      case Compare::kLess:
        return x < y;
      case Compare::kGreater:
        return x > y;
      case Compare::kLessOrEqual:
        return x <= y;
      case Compare::kGreaterOrEqual:
        return x >= y;
      case Compare::kAnd:
        return x && y;
      case Compare::kOr:
        return x || y;
      case Compare::kXor:
        return (x != 0) != (y != 0);
    }
    return std::nullopt;
  });
}

// Not (bool), Neg, Abs, Sign (integers).
enum class Unary { kNot, kNeg, kAbs, kSign };

template <Unary f>
std::optional<Tensor> unary(const ShapeInputs& in) {
  auto x = small(in, 0);
  if (!x || ((f == Unary::kNot) != (x->dtype == DType::kBool))) return std::nullopt;
  for (int64_t& v : x->v) {
    if (v == INT64_MIN && (f == Unary::kNeg || f == Unary::kAbs)) return std::nullopt;
    v = f == Unary::kNot ? !v : f == Unary::kNeg ? -v : f == Unary::kAbs ? std::abs(v) : (v > 0) - (v < 0);
  }
  return tensor(*x);
}

// ReduceProd, ReduceSum, ReduceMax, ReduceMin of a vector along its one axis.
enum class Reduce { kProd, kSum, kMax, kMin };

template <Reduce f>
std::optional<Tensor> reduce(const ShapeInputs& in) {
  const auto x = small(in, 0);
  if (!x || x->dims.size() != 1 || x->dtype == DType::kBool) return std::nullopt;
  if (in.count() > 1 || in.node.has_attr("axes")) {
    const std::vector<int64_t> axes = in.node.ints_attr("axes");
    if (axes.size() != 1 || (axes[0] != 0 && axes[0] != -1)) return std::nullopt;
  }
  if (x->v.empty()) return std::nullopt;
  int64_t r = x->v[0];
  for (size_t i = 1; i < x->v.size(); ++i) {
    const int64_t v = x->v[i];
    if (f == Reduce::kProd && __builtin_mul_overflow(r, v, &r)) return std::nullopt;
    if (f == Reduce::kSum && __builtin_add_overflow(r, v, &r)) return std::nullopt;
    if (f == Reduce::kMax) r = std::max(r, v);
    if (f == Reduce::kMin) r = std::min(r, v);
  }
  Ints t{x->dtype, {}, {r}};
  if (in.node.int_attr("keepdims", 1) != 0) t.dims = {1};
  return tensor(t);
}

}  // namespace

std::optional<Tensor> value_add(const ShapeInputs& in) { return arithmetic<Arith::kAdd>(in); }
std::optional<Tensor> value_sub(const ShapeInputs& in) { return arithmetic<Arith::kSub>(in); }
std::optional<Tensor> value_mul(const ShapeInputs& in) { return arithmetic<Arith::kMul>(in); }
std::optional<Tensor> value_div(const ShapeInputs& in) { return arithmetic<Arith::kDiv>(in); }
std::optional<Tensor> value_mod(const ShapeInputs& in) { return arithmetic<Arith::kMod>(in); }
std::optional<Tensor> value_min(const ShapeInputs& in) { return arithmetic<Arith::kMin>(in); }
std::optional<Tensor> value_max(const ShapeInputs& in) { return arithmetic<Arith::kMax>(in); }
std::optional<Tensor> value_equal(const ShapeInputs& in) { return compare<Compare::kEqual>(in); }
std::optional<Tensor> value_less(const ShapeInputs& in) { return compare<Compare::kLess>(in); }
std::optional<Tensor> value_greater(const ShapeInputs& in) { return compare<Compare::kGreater>(in); }
std::optional<Tensor> value_less_or_equal(const ShapeInputs& in) { return compare<Compare::kLessOrEqual>(in); }
std::optional<Tensor> value_greater_or_equal(const ShapeInputs& in) { return compare<Compare::kGreaterOrEqual>(in); }
std::optional<Tensor> value_and(const ShapeInputs& in) { return compare<Compare::kAnd>(in); }
std::optional<Tensor> value_or(const ShapeInputs& in) { return compare<Compare::kOr>(in); }
std::optional<Tensor> value_xor(const ShapeInputs& in) { return compare<Compare::kXor>(in); }
std::optional<Tensor> value_not(const ShapeInputs& in) { return unary<Unary::kNot>(in); }
std::optional<Tensor> value_neg(const ShapeInputs& in) { return unary<Unary::kNeg>(in); }
std::optional<Tensor> value_abs(const ShapeInputs& in) { return unary<Unary::kAbs>(in); }
std::optional<Tensor> value_sign(const ShapeInputs& in) { return unary<Unary::kSign>(in); }
std::optional<Tensor> value_reduce_prod(const ShapeInputs& in) { return reduce<Reduce::kProd>(in); }
std::optional<Tensor> value_reduce_sum(const ShapeInputs& in) { return reduce<Reduce::kSum>(in); }
std::optional<Tensor> value_reduce_max(const ShapeInputs& in) { return reduce<Reduce::kMax>(in); }
std::optional<Tensor> value_reduce_min(const ShapeInputs& in) { return reduce<Reduce::kMin>(in); }

std::optional<Tensor> value_where(const ShapeInputs& in) {
  const auto c = small(in, 0), a = small(in, 1), b = small(in, 2);
  if (!c || !a || !b || c->dtype != DType::kBool || a->dtype != b->dtype) return std::nullopt;
  return broadcast({*c, *a, *b}, a->dtype,
                   [](const std::vector<int64_t>& v) -> std::optional<int64_t> { return v[0] ? v[1] : v[2]; });
}

std::optional<Tensor> value_constant_of_shape(const ShapeInputs& in) {
  const auto shape = small(in, 0);
  if (!shape || shape->dims.size() != 1) return std::nullopt;
  for (int64_t d : shape->v)
    if (d < 0 || d > kMaxFoldedElements) return std::nullopt;
  if (count_of(shape->v) > kMaxFoldedElements) return std::nullopt;
  const auto it = in.node.attributes.find("value");
  if (it == in.node.attributes.end()) return std::nullopt;  // float 0 is not a shape value
  const Tensor* value = std::get_if<Tensor>(&it->second);
  if (!value || value->elements() != 1 || !int_like(value->dtype())) return std::nullopt;
  const ShapeInputs one_value{in.node, in.label, in.opset, {TensorType{value->dtype(), value->shape()}}, {value}};
  const auto v = small(one_value, 0);
  return tensor(Ints{v->dtype, shape->v, std::vector<int64_t>(static_cast<size_t>(count_of(shape->v)), v->v[0])});
}

std::optional<Tensor> value_expand(const ShapeInputs& in) {
  const auto x = small(in, 0), shape = small(in, 1);
  if (!x || !shape || shape->dims.size() != 1) return std::nullopt;
  for (int64_t d : shape->v)
    if (d < 0 || d > kMaxFoldedElements) return std::nullopt;
  if (count_of(shape->v) > kMaxFoldedElements) return std::nullopt;
  const Ints target{x->dtype, shape->v, std::vector<int64_t>(static_cast<size_t>(count_of(shape->v)), 0)};
  return broadcast({*x, target}, x->dtype,
                   [](const std::vector<int64_t>& v) -> std::optional<int64_t> { return v[0]; });
}

// Reshape, Flatten, Squeeze, Unsqueeze of a small constant: its values under the shape the
// shape rule worked out.
std::optional<Tensor> value_reshape(const ShapeInputs& in) {
  auto x = small(in, 0);
  if (!x) return std::nullopt;
  if (in.node.int_attr("allowzero", 0) != 0) return std::nullopt;  // Reshape's zeros are extents then
  const OpRecord* record = find_op(in.node, in.opset);
  if (!record || !record->shape) return std::nullopt;
  x->dims = record->shape(in).at(0).shape;
  return tensor(*x);
}

std::optional<Tensor> value_squeeze(const ShapeInputs& in) { return value_reshape(in); }

std::optional<Tensor> value_range(const ShapeInputs& in) {
  const auto start = small(in, 0), limit = small(in, 1), delta = small(in, 2);
  if (!start || !limit || !delta || start->v.size() != 1 || limit->v.size() != 1 || delta->v.size() != 1 ||
      delta->v[0] == 0 || start->dtype == DType::kBool)
    return std::nullopt;
  const int64_t s = start->v[0], l = limit->v[0], d = delta->v[0];
  int64_t span;
  if (__builtin_sub_overflow(l, s, &span) || d == INT64_MIN) return std::nullopt;
  // ceil(span / d), at least 0
  const int64_t count = d > 0 ? (span > 0 ? (span - 1) / d + 1 : 0) : (span < 0 ? -(span + 1) / -d + 1 : 0);
  if (count > kMaxFoldedElements) return std::nullopt;
  Ints t{start->dtype, {count}, {}};
  for (int64_t i = 0; i < count; ++i) t.v.push_back(s + i * d);
  return tensor(t);
}

std::optional<Tensor> value_gather(const ShapeInputs& in) {
  const auto data = small(in, 0), indices = small(in, 1);
  if (!data || !indices || data->dims.empty()) return std::nullopt;
  const auto rank = static_cast<int64_t>(data->dims.size());
  int64_t axis = in.node.int_attr("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  if (rank > 1 && indices->dims.size() <= 1) {
    // Along another axis of a matrix: select, then drop the axis for a scalar index.
    std::vector<std::vector<int64_t>> picks = every_index(data->dims);
    const int64_t size = data->dims[static_cast<size_t>(axis)];
    picks[static_cast<size_t>(axis)].clear();
    for (int64_t i : indices->v) {
      if (i < 0) i += size;
      if (i < 0 || i >= size) return std::nullopt;
      picks[static_cast<size_t>(axis)].push_back(i);
    }
    Ints t = select(*data, picks);
    if (indices->dims.empty()) t.dims.erase(t.dims.begin() + axis);
    return tensor(t);
  }
  if (data->dims.size() != 1) return std::nullopt;
  const auto size = static_cast<int64_t>(data->v.size());
  Ints t{data->dtype, indices->dims, {}};
  for (int64_t i : indices->v) {
    if (i < 0) i += size;
    if (i < 0 || i >= size) return std::nullopt;
    t.v.push_back(data->v[static_cast<size_t>(i)]);
  }
  return tensor(t);
}

std::optional<Tensor> value_concat(const ShapeInputs& in) {
  const auto xs = all_small(in, true);
  if (!xs) return std::nullopt;
  const auto rank = static_cast<int64_t>((*xs)[0].dims.size());
  int64_t axis = in.node.int_attr("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const auto a = static_cast<size_t>(axis);
  Ints t{(*xs)[0].dtype, (*xs)[0].dims, {}};
  t.dims[a] = 0;
  for (const Ints& x : *xs) {
    if (x.dims.size() != (*xs)[0].dims.size()) return std::nullopt;
    for (size_t d = 0; d < x.dims.size(); ++d)
      if (d != a && x.dims[d] != (*xs)[0].dims[d]) return std::nullopt;
    t.dims[a] += x.dims[a];
  }
  int64_t outer = 1;
  for (size_t d = 0; d < a; ++d) outer *= t.dims[d];
  for (int64_t o = 0; o < outer; ++o)
    for (const Ints& x : *xs) {
      const int64_t chunk = static_cast<int64_t>(x.v.size()) / std::max<int64_t>(outer, 1);
      t.v.insert(t.v.end(), x.v.begin() + o * chunk, x.v.begin() + (o + 1) * chunk);
    }
  return tensor(t);
}

std::optional<Tensor> value_slice(const ShapeInputs& in) {
  const auto x = small(in, 0);
  if (!x) return std::nullopt;
  std::vector<int64_t> starts, ends, axes, steps;
  if (in.opset >= 10) {
    const auto s = small(in, 1), e = small(in, 2);
    if (!s || !e) return std::nullopt;
    starts = s->v;
    ends = e->v;
    if (in.has(3)) {
      const auto a = small(in, 3);
      if (!a) return std::nullopt;
      axes = a->v;
    }
    if (in.has(4)) {
      const auto st = small(in, 4);
      if (!st) return std::nullopt;
      steps = st->v;
    }
  } else {
    starts = in.node.ints_attr("starts");
    ends = in.node.ints_attr("ends");
    axes = in.node.ints_attr("axes");
  }
  const SliceRanges r = slice_ranges(x->dims, starts, ends, std::move(axes), std::move(steps));
  if (!r.error.empty()) return std::nullopt;
  std::vector<std::vector<int64_t>> picks = every_index(x->dims);
  for (const SliceRange& range : r.ranges) {
    std::vector<int64_t> pick;
    for (int64_t i = 0; i < range.count; ++i) pick.push_back(range.start + i * range.step);
    picks[range.axis] = pick;
  }
  return tensor(select(*x, picks));
}

std::optional<Tensor> value_transpose(const ShapeInputs& in) {
  const auto x = small(in, 0);
  if (!x) return std::nullopt;
  const size_t rank = x->dims.size();
  std::vector<int64_t> perm = in.node.ints_attr("perm");
  if (perm.empty())
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != rank) return std::nullopt;
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * x->dims[d];
  Ints t{x->dtype, {}, {}};
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank)) return std::nullopt;
    t.dims.push_back(x->dims[static_cast<size_t>(p)]);
  }
  std::vector<int64_t> index(rank, 0);
  for (size_t e = 0; e < x->v.size(); ++e) {
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d) flat += index[d] * strides[static_cast<size_t>(perm[d])];
    t.v.push_back(x->v[static_cast<size_t>(flat)]);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < t.dims[d]) break;
      index[d] = 0;
    }
  }
  return tensor(t);
}

}  // namespace memledger::shape_rules
