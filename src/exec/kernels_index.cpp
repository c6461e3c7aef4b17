// Index and rearrangement kernels: ArgMax/ArgMin, GatherElements, GatherND,
// ScatterElements, ScatterND, Range, Trilu, TopK, CumSum, OneHot, DepthToSpace,
// SpaceToDepth and EyeLike. Elements are moved by their byte size, so the data movers take
// any dtype; the ones that compare or add values dispatch on the element type. None of
// them writes over an input (their op-table records give no in-place rule); Scatter*'s
// output starts as a copy of its data input, and skips the copy when it is that buffer.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "kernel.h"
#include "strided.h"

namespace memledger::exec {
namespace {

std::string any_dtype(const Graph&, const Node&) { return {}; }

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

std::string number_input(const Graph& g, const Node& n) {
  const DType type = g.value(n.inputs.at(0)).dtype;
  return with_number_type(type, [](auto) {}) ? std::string() : fmt::format("input 0 is {}", dtype_name(type));
}

int64_t checked_index(const Node& node, int64_t index, int64_t extent) {
  if (index < -extent || index >= extent)
    fail("node {}: index {} is out of range for extent {}", node.label(), index, extent);
  return index < 0 ? index + extent : index;
}

// ---- ArgMax / ArgMin ----

template <bool kMax>
void arg_reduce(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const int64_t axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", 0), x.rank());
  const bool last = ctx.node.int_attr("select_last_index", 0) != 0;
  const int64_t outer = product(x.shape, 0, axis), len = x.shape[axis], inner = product(x.shape, axis + 1, x.rank());
  int64_t* y = ctx.out().as<int64_t>();
  with_number_type(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.as<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* row = px + o * len * inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < len; ++k) {
          const T v = row[k * inner], b = row[best * inner];
          const bool better = kMax ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
          if (better) best = k;
        }
        y[o * inner + i] = best;
      }
  });
}

// ---- GatherElements / ScatterElements ----

void gather_elements(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const InputView& idx = ctx.in(1);
  OutputView& y = ctx.out();
  const int64_t rank = x.rank(), axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", 0), rank);
  const std::vector<int64_t> indices = read_ints(idx);
  const std::vector<int64_t> xs = dense_strides(x.shape);
  const int eb = host_element_bytes(x.dtype);
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
  for (size_t e = 0; e < indices.size(); ++e) {
    int64_t src = 0;
    for (int64_t a = 0; a < rank; ++a)
      src += (a == axis ? checked_index(ctx.node, indices[e], x.shape[a]) : pos[a]) * xs[a];
    std::memcpy(y.data + static_cast<int64_t>(e) * eb, x.data + src * eb, static_cast<size_t>(eb));
    for (int64_t a = rank; a-- > 0;) {
      if (++pos[a] < idx.shape[a]) break;
      pos[a] = 0;
    }
  }
}

// Applies reduction `mode` ("none", "add", "mul", "max", "min") of src into dst.
void combine(DType type, std::byte* dst, const std::byte* src, const std::string& mode) {
  if (mode == "none" || mode.empty()) {
    std::memcpy(dst, src, static_cast<size_t>(host_element_bytes(type)));
    return;
  }
  const bool ok = with_number_type(type, [&](auto tag) {
    using T = decltype(tag);
    T a, b;
    std::memcpy(&a, dst, sizeof(T));
    std::memcpy(&b, src, sizeof(T));
    T r = a;
    if (mode == "add") r = static_cast<T>(a + b);
    if (mode == "mul") r = static_cast<T>(a * b);
    if (mode == "max") r = std::max(a, b);
    if (mode == "min") r = std::min(a, b);
    std::memcpy(dst, &r, sizeof(T));
  });
  if (!ok) fail("reduction '{}' on {}", mode, dtype_name(type));
}

void copy_data_input(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const size_t bytes = static_cast<size_t>(x.elements() * host_element_bytes(x.dtype));
  if (y.data != x.data && bytes) std::memmove(y.data, x.data, bytes);
}

void scatter_elements(KernelContext& ctx) {
  copy_data_input(ctx);
  const InputView& idx = ctx.in(1);
  const InputView& upd = ctx.in(2);
  OutputView& y = ctx.out();
  const int64_t rank = y.rank(), axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", 0), rank);
  const std::string mode = ctx.node.string_attr("reduction", "none");
  const std::vector<int64_t> indices = read_ints(idx);
  const std::vector<int64_t> ys = dense_strides(y.shape);
  const int eb = host_element_bytes(y.dtype);
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
  for (size_t e = 0; e < indices.size(); ++e) {
    int64_t dst = 0;
    for (int64_t a = 0; a < rank; ++a)
      dst += (a == axis ? checked_index(ctx.node, indices[e], y.shape[a]) : pos[a]) * ys[a];
    combine(y.dtype, y.data + dst * eb, upd.data + static_cast<int64_t>(e) * eb, mode);
    for (int64_t a = rank; a-- > 0;) {
      if (++pos[a] < idx.shape[a]) break;
      pos[a] = 0;
    }
  }
}

// ---- GatherND / ScatterND ----

void gather_nd(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const InputView& idx = ctx.in(1);
  const int64_t batch_dims = ctx.node.int_attr("batch_dims", 0);
  const int64_t k = idx.shape.back();
  const std::vector<int64_t> indices = read_ints(idx);
  const int eb = host_element_bytes(x.dtype);
  const int64_t batch = product(x.shape, 0, static_cast<size_t>(batch_dims));
  const int64_t slice = product(x.shape, static_cast<size_t>(batch_dims + k), x.shape.size()) * eb;
  const int64_t per_batch_x = product(x.shape, static_cast<size_t>(batch_dims), x.shape.size()) * eb;
  const int64_t tuples = static_cast<int64_t>(indices.size()) / std::max<int64_t>(k, 1);
  const int64_t per_batch_tuples = tuples / std::max<int64_t>(batch, 1);
  const std::vector<int64_t> xs = dense_strides(x.shape);
  std::byte* y = ctx.out().data;
  for (int64_t t = 0; t < tuples; ++t) {
    const int64_t b = t / std::max<int64_t>(per_batch_tuples, 1);
    int64_t offset = b * per_batch_x;
    for (int64_t j = 0; j < k; ++j) {
      const auto a = static_cast<size_t>(batch_dims + j);
      offset += checked_index(ctx.node, indices[static_cast<size_t>(t * k + j)], x.shape[a]) * xs[a] * eb;
    }
    std::memcpy(y + t * slice, x.data + offset, static_cast<size_t>(slice));
  }
}

void scatter_nd(KernelContext& ctx) {
  copy_data_input(ctx);
  const InputView& idx = ctx.in(1);
  const InputView& upd = ctx.in(2);
  OutputView& y = ctx.out();
  const std::string mode = ctx.node.string_attr("reduction", "none");
  const int64_t k = idx.shape.back();
  const std::vector<int64_t> indices = read_ints(idx);
  const int eb = host_element_bytes(y.dtype);
  const int64_t slice = product(y.shape, static_cast<size_t>(k), y.shape.size());
  const std::vector<int64_t> ys = dense_strides(y.shape);
  const int64_t tuples = static_cast<int64_t>(indices.size()) / std::max<int64_t>(k, 1);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j)
      offset += checked_index(ctx.node, indices[static_cast<size_t>(t * k + j)], y.shape[static_cast<size_t>(j)]) *
                ys[static_cast<size_t>(j)];
    for (int64_t e = 0; e < slice; ++e)
      combine(y.dtype, y.data + (offset + e) * eb, upd.data + (t * slice + e) * eb, mode);
  }
}

// ---- Range ----

void range(KernelContext& ctx) {
  OutputView& y = ctx.out();
  with_number_type(y.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T start = ctx.in(0).as<T>()[0], delta = ctx.in(2).as<T>()[0];
    T* p = y.as<T>();
    for (int64_t i = 0, n = y.elements(); i < n; ++i) p[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  });
}

// ---- Trilu ----

void trilu(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const bool upper = ctx.node.int_attr("upper", 1) != 0;
  const int64_t k = ctx.has_input(1) ? read_ints(ctx.in(1)).at(0) : 0;
  const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  const int64_t batch = product(x.shape, 0, x.shape.size() - 2);
  const int eb = host_element_bytes(x.dtype);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t e = (b * rows + i) * cols + j;
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (keep)
          std::memmove(y.data + e * eb, x.data + e * eb, static_cast<size_t>(eb));
        else
          std::memset(y.data + e * eb, 0, static_cast<size_t>(eb));
      }
}

// ---- TopK ----

void top_k(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const int64_t axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", -1), x.rank());
  const bool largest = ctx.node.int_attr("largest", 1) != 0;
  const int64_t k = ctx.graph.opset >= 10 ? read_ints(ctx.in(1)).at(0) : ctx.node.int_attr("k", 1);
  const int64_t outer = product(x.shape, 0, axis), len = x.shape[axis], inner = product(x.shape, axis + 1, x.rank());
  if (k < 0 || k > len) fail("node {}: k = {} for an axis of {}", ctx.node.label(), k, len);
  with_number_type(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.as<T>();
    T* values = ctx.out(0).as<T>();
    int64_t* idx = ctx.has_output(1) ? ctx.out(1).as<int64_t>() : nullptr;
    std::vector<int64_t> order(static_cast<size_t>(len));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* row = px + o * len * inner + i;
        std::iota(order.begin(), order.end(), int64_t{0});
        // Ties keep the lower index first (ONNX's rule); NaN counts as the largest.
        auto before = [&](int64_t a, int64_t b) {
          const T va = row[a * inner], vb = row[b * inner];
          if (va == vb) return a < b;
          if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(va) || std::isnan(vb))
              return largest ? std::isnan(va) && !std::isnan(vb) : std::isnan(vb) && !std::isnan(va);
          }
          return largest ? va > vb : va < vb;
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (o * k + j) * inner + i;
          values[at] = row[order[static_cast<size_t>(j)] * inner];
          if (idx) idx[at] = order[static_cast<size_t>(j)];
        }
      }
  });
}

// ---- CumSum ----

void cum_sum(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const int64_t axis = normalize_axis(ctx.node, read_ints(ctx.in(1)).at(0), x.rank());
  const bool exclusive = ctx.node.int_attr("exclusive", 0) != 0, reverse = ctx.node.int_attr("reverse", 0) != 0;
  const int64_t outer = product(x.shape, 0, axis), len = x.shape[axis], inner = product(x.shape, axis + 1, x.rank());
  with_number_type(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.as<T>();
    T* py = ctx.out().as<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T acc{};
        for (int64_t s = 0; s < len; ++s) {
          const int64_t kk = reverse ? len - 1 - s : s;
          const int64_t at = (o * len + kk) * inner + i;
          const T v = px[at];
          if (exclusive) {
            py[at] = acc;
            acc = static_cast<T>(acc + v);
          } else {
            acc = static_cast<T>(acc + v);
            py[at] = acc;
          }
        }
      }
  });
}

// ---- OneHot ----

void one_hot(KernelContext& ctx) {
  const InputView& idx = ctx.in(0);
  OutputView& y = ctx.out();
  const int64_t rank = y.rank();
  const int64_t axis = normalize_axis(ctx.node, ctx.node.int_attr("axis", -1), rank);
  double depth_value = 0;
  with_number_type(ctx.in(1).dtype, [&](auto tag) {
    using T = decltype(tag);
    depth_value = static_cast<double>(ctx.in(1).as<T>()[0]);
  });
  const auto depth = static_cast<int64_t>(depth_value);
  const int eb = host_element_bytes(y.dtype);
  const std::byte* off_value = ctx.in(2).data;
  const std::byte* on_value = ctx.in(2).data + eb;
  std::vector<double> indices(static_cast<size_t>(idx.elements()));
  with_number_type(idx.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<double>(idx.as<T>()[i]);
  });
  const int64_t outer = product(y.shape, 0, axis), inner = product(y.shape, axis + 1, y.shape.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t i = 0; i < inner; ++i) {
        auto target = static_cast<int64_t>(indices[static_cast<size_t>(o * inner + i)]);
        if (target < 0) target += depth;
        const std::byte* v = target == d ? on_value : off_value;
        std::memcpy(y.data + ((o * depth + d) * inner + i) * eb, v, static_cast<size_t>(eb));
      }
}

// ---- DepthToSpace / SpaceToDepth: one strided copy over a 6-D view ----

void depth_to_space(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const int64_t b = ctx.node.int_attr("blocksize", 1);
  const bool crd = ctx.node.string_attr("mode", "DCR") == "CRD";
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3], oc = c / (b * b);
  // Output [n, oc, h, b, w, b]; input element strides for each of those axes.
  const int64_t hw = h * w;
  const std::vector<int64_t> src = crd ? std::vector<int64_t>{c * hw, b * b * hw, w, b * hw, 1, hw}
                                       : std::vector<int64_t>{c * hw, hw, w, b * oc * hw, 1, oc * hw};
  const Shape shape{n, oc, h, b, w, b};
  strided_copy(y.data, dense_strides(shape), x.data, src, shape, host_element_bytes(x.dtype));
}

void space_to_depth(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  OutputView& y = ctx.out();
  const int64_t b = ctx.node.int_attr("blocksize", 1);
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  // Output [n, b, b, c, h/b, w/b] (DCR order); input strides for those axes.
  const Shape shape{n, b, b, c, h / b, w / b};
  const std::vector<int64_t> src{c * h * w, w, 1, h * w, b * w, b};
  strided_copy(y.data, dense_strides(shape), x.data, src, shape, host_element_bytes(x.dtype));
}

void eye_like(KernelContext& ctx) {
  OutputView& y = ctx.out();
  const int64_t k = ctx.node.int_attr("k", 0);
  const int64_t rows = y.shape[0], cols = y.shape[1];
  const int eb = host_element_bytes(y.dtype);
  std::memset(y.data, 0, static_cast<size_t>(y.elements() * eb));
  with_number_type(y.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = y.as<T>();
    for (int64_t i = 0; i < rows; ++i)
      if (i + k >= 0 && i + k < cols) p[i * cols + i + k] = T{1};
  });
  if (y.dtype == DType::kBool)
    for (int64_t i = 0; i < rows; ++i)
      if (i + k >= 0 && i + k < cols) y.data[i * cols + i + k] = std::byte{1};
}

Kernel plain(std::string (*check)(const Graph&, const Node&), void (*run)(KernelContext&)) {
  return Kernel{.check = check, .run = run};
}

}  // namespace

void add_index_kernels(KernelTable& t) {
  t.emplace_back(":ArgMax", plain(number_input, arg_reduce<true>));
  t.emplace_back(":ArgMin", plain(number_input, arg_reduce<false>));
  t.emplace_back(":GatherElements", plain(any_dtype, gather_elements));
  t.emplace_back(":GatherND", plain(any_dtype, gather_nd));
  t.emplace_back(":ScatterElements", Kernel{.check = any_dtype, .run = scatter_elements});
  t.emplace_back(":Scatter", Kernel{.check = any_dtype, .run = scatter_elements});
  t.emplace_back(":ScatterND", Kernel{.check = any_dtype, .run = scatter_nd});
  t.emplace_back(":Range", plain(number_input, range));
  t.emplace_back(":Trilu", plain(any_dtype, trilu));
  t.emplace_back(":TopK", plain(number_input, top_k));
  t.emplace_back(":CumSum", plain(number_input, cum_sum));
  t.emplace_back(":OneHot", plain(any_dtype, one_hot));
  t.emplace_back(":DepthToSpace", plain(any_dtype, depth_to_space));
  t.emplace_back(":SpaceToDepth", plain(any_dtype, space_to_depth));
  t.emplace_back(":EyeLike", plain(any_dtype, eye_like));
}

}  // namespace memledger::exec
