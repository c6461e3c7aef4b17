// Comparison, logic and selection kernels: Equal, Less, Greater, LessOrEqual,
// GreaterOrEqual (any arithmetic type → bool), Not, And, Or, Xor (bool), Where (bool
// condition, any dtype), Mod (integer and fmod), PRelu, Sign, IsNaN, IsInf and BitShift.
// Operands broadcast through zero strides (multidirectional, right-aligned), never
// expanded; every kernel reads element i before it writes element i, so an output may be
// written over an input of its shape and dtype.
#include <cmath>
#include <cstring>

#include "kernel.h"
#include "strided.h"

namespace memledger::exec {
namespace {

// Typed element pointers that also take bool (stored one byte per element, 0 or 1).
template <typename T>
const T* elements_of(const InputView& v) {
  return reinterpret_cast<const T*>(v.data);
}
template <typename T>
T* elements_of(OutputView& v) {
  return reinterpret_cast<T*>(v.data);
}

// y[i] = f(a[i], b[i]) with a and b broadcast to y's shape.
template <typename Y, typename A, typename B, typename F>
void each2(const InputView& a, const InputView& b, OutputView& y, F f) {
  StridedLoop<3> loop(
      y.shape, {dense_strides(y.shape), broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)});
  const A* pa = reinterpret_cast<const A*>(a.data);
  const B* pb = reinterpret_cast<const B*>(b.data);
  Y* py = reinterpret_cast<Y*>(y.data);
  loop.for_each_row([&](const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& s) {
    for (int64_t i = 0; i < n; ++i) py[off[0] + i * s[0]] = f(pa[off[1] + i * s[1]], pb[off[2] + i * s[2]]);
  });
}

std::string same_input_types(const Graph& g, const Node& n) {
  const DType type = g.value(n.inputs.at(0)).dtype;
  if (!with_value_type(type, [](auto) {})) return fmt::format("input 0 is {}", dtype_name(type));
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i].valid() && g.value(n.inputs[i]).dtype != type)
      return fmt::format("input {} is {}, input 0 {}", i, dtype_name(g.value(n.inputs[i]).dtype), dtype_name(type));
  return {};
}

std::string bool_inputs(const Graph& g, const Node& n) {
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (auto why = check_dtypes(g, n, i, {DType::kBool}); !why.empty()) return why;
  return {};
}

template <typename Op>
Kernel compare_kernel(Op op) {
  return Kernel{
      .check = same_input_types,
      .run =
          [op](KernelContext& ctx) {
            with_value_type(ctx.in(0).dtype, [&](auto tag) {
              using T = decltype(tag);
              each2<bool, T, T>(ctx.in(0), ctx.in(1), ctx.out(), [&](T a, T b) { return op(a, b); });
            });
          },
  };
}

template <typename Op>
Kernel logic_kernel(Op op) {
  return Kernel{
      .check = bool_inputs,
      .run =
          [op](KernelContext& ctx) {
            each2<bool, bool, bool>(ctx.in(0), ctx.in(1), ctx.out(), [&](bool a, bool b) { return op(a, b); });
          },
  };
}

void where(KernelContext& ctx) {
  const InputView &c = ctx.in(0), &a = ctx.in(1), &b = ctx.in(2);
  OutputView& y = ctx.out();
  StridedLoop<4> loop(y.shape, {dense_strides(y.shape), broadcast_strides(c.shape, y.shape),
                                broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)});
  const int eb = host_element_bytes(y.dtype);
  const bool* pc = elements_of<bool>(c);
  loop.for_each_row([&](const std::array<int64_t, 4>& off, int64_t n, const std::array<int64_t, 4>& s) {
    for (int64_t i = 0; i < n; ++i) {
      const bool pick = pc[off[1] + i * s[1]];
      const std::byte* src = pick ? a.data + (off[2] + i * s[2]) * eb : b.data + (off[3] + i * s[3]) * eb;
      std::memmove(y.data + (off[0] + i * s[0]) * eb, src, static_cast<size_t>(eb));
    }
  });
}

// Mod: integers take the divisor's sign (Python's %) unless fmod=1; floats need fmod=1 and
// take the dividend's sign (C's fmod). A zero integer divisor is an Error.
void mod(KernelContext& ctx) {
  const bool fmod = ctx.node.int_attr("fmod", 0) != 0;
  with_value_type(ctx.in(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    each2<T, T, T>(ctx.in(0), ctx.in(1), ctx.out(), [&](T a, T b) -> T {
      if constexpr (std::is_floating_point_v<T>) {
        return std::fmod(a, b);
      } else if constexpr (std::is_same_v<T, bool>) {
        fail("node {}: Mod of bool", ctx.node.label());
      } else {
        if (b == 0) fail("node {}: integer Mod by zero", ctx.node.label());
        if constexpr (std::is_signed_v<T>) {
          if (a == std::numeric_limits<T>::min() && b == -1) return T{0};
        }
        T r = static_cast<T>(a % b);
        if constexpr (std::is_signed_v<T>) {
          if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        }
        return r;
      }
    });
  });
}

std::string check_mod(const Graph& g, const Node& n) {
  if (auto why = same_input_types(g, n); !why.empty()) return why;
  const DType type = g.value(n.inputs.at(0)).dtype;
  if (type == DType::kBool) return "input 0 is bool";
  if ((type == DType::kFloat32 || type == DType::kFloat64) && n.int_attr("fmod", 0) == 0)
    return "a float Mod needs fmod=1";
  return {};
}

void prelu(KernelContext& ctx) {
  each2<float, float, float>(ctx.in(0), ctx.in(1), ctx.out(), [](float x, float s) { return x < 0 ? s * x : x; });
}

template <typename T>
T sign_of(T v) {
  if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>)
    return static_cast<T>(v != 0);
  else
    return static_cast<T>((v > T{0}) - (v < T{0}));
}

void sign(KernelContext& ctx) {
  with_value_type(ctx.in(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = elements_of<T>(ctx.in(0));
    T* y = elements_of<T>(ctx.out());
    for (int64_t i = 0, n = ctx.out().elements(); i < n; ++i) y[i] = sign_of(x[i]);
  });
}

template <bool kNaN>
void is_special(KernelContext& ctx) {
  const bool neg = ctx.node.int_attr("detect_negative", 1) != 0, pos = ctx.node.int_attr("detect_positive", 1) != 0;
  with_value_type(ctx.in(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* x = elements_of<T>(ctx.in(0));
      bool* y = elements_of<bool>(ctx.out());
      for (int64_t i = 0, n = ctx.out().elements(); i < n; ++i)
        y[i] = kNaN ? std::isnan(x[i]) : std::isinf(x[i]) && ((x[i] > 0 && pos) || (x[i] < 0 && neg));
    }
  });
}

void bit_shift(KernelContext& ctx) {
  const bool left = ctx.node.string_attr("direction", "") == "LEFT";
  with_value_type(ctx.in(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
      each2<T, T, T>(ctx.in(0), ctx.in(1), ctx.out(), [&](T a, T b) -> T {
        if (b >= sizeof(T) * 8) return T{0};
        return static_cast<T>(left ? a << b : a >> b);
      });
    }
  });
}

Kernel simple(std::string (*check)(const Graph&, const Node&), void (*run)(KernelContext&), size_t) {
  return Kernel{.check = check, .run = run};
}

}  // namespace

void add_logic_kernels(KernelTable& t) {
  t.emplace_back(":Equal", compare_kernel([](auto a, auto b) { return a == b; }));
  t.emplace_back(":Less", compare_kernel([](auto a, auto b) { return a < b; }));
  t.emplace_back(":Greater", compare_kernel([](auto a, auto b) { return a > b; }));
  t.emplace_back(":LessOrEqual", compare_kernel([](auto a, auto b) { return a <= b; }));
  t.emplace_back(":GreaterOrEqual", compare_kernel([](auto a, auto b) { return a >= b; }));
  t.emplace_back(":And", logic_kernel([](bool a, bool b) { return a && b; }));
  t.emplace_back(":Or", logic_kernel([](bool a, bool b) { return a || b; }));
  t.emplace_back(":Xor", logic_kernel([](bool a, bool b) { return a != b; }));
  t.emplace_back(":Not", simple(
                             bool_inputs,
                             [](KernelContext& ctx) {
                               const bool* x = elements_of<bool>(ctx.in(0));
                               bool* y = elements_of<bool>(ctx.out());
                               for (int64_t i = 0, n = ctx.out().elements(); i < n; ++i) y[i] = !x[i];
                             },
                             1));
  t.emplace_back(":Where", Kernel{.check = [](const Graph& g, const Node& n) -> std::string {
                                    if (auto why = check_dtypes(g, n, 0, {DType::kBool}); !why.empty()) return why;
                                    if (g.value(n.inputs.at(1)).dtype != g.value(n.inputs.at(2)).dtype)
                                      return "inputs 1 and 2 differ in dtype";
                                    return {};
                                  },
                                  .run = where});
  t.emplace_back(":Mod", simple(check_mod, mod, 2));
  t.emplace_back(":PRelu", simple(
                               [](const Graph& g, const Node& n) {
                                 return check_float_inputs(g, n, {0, 1});
                               },
                               prelu, 1));
  t.emplace_back(":Sign", simple(same_input_types, sign, 1));
  auto float_in = [](const Graph& g, const Node& n) {
    return check_dtypes(g, n, 0, {DType::kFloat32, DType::kFloat64});
  };
  t.emplace_back(":IsNaN", simple(float_in, is_special<true>, 0));
  t.emplace_back(":IsInf", simple(float_in, is_special<false>, 0));
  t.emplace_back(":BitShift", simple(
                                  [](const Graph& g, const Node& n) {
                                    return check_dtypes(g, n, 0, {DType::kUInt8, DType::kUInt16});
                                  },
                                  bit_shift, 2));
}

}  // namespace memledger::exec
