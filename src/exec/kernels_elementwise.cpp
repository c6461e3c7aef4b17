// Elementwise kernels: unary activations, Clip, binary arithmetic with multidirectional
// broadcasting, variadic Max/Min/Sum/Mean, and memledger's fused per-channel Affine.
// Operands are strided views (a broadcast operand has stride 0 where it repeats), so a
// [1,C,1,1] parameter is read C times, never expanded. Every kernel here reads element i of
// its inputs before it writes element i of its output, so the output may be written over
// any input of the output's shape (the contract says which).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "activation_functions.h"
#include "kernel.h"
#include "memledger/ir/affine.h"
#include "memledger/ir/self_gated.h"
#include "strided.h"

namespace memledger::exec {
namespace {

// ---- unary ----

void add_unary(KernelTable& t) {
  // Every unary activation, its function from activation_functions.h (where the integer
  // kernels find the same function to tabulate).
  for (std::string_view op : activation_function_ops())
    t.emplace_back(kernel_key("", op),
                   Kernel{.check = [](const Graph& g, const Node& n) { return check_float_inputs(g, n, {0}); },
                          .run =
                              [](KernelContext& ctx) {
                                activation_function(ctx.node)(ctx.in(0).as<float>(), ctx.out().as<float>(),
                                                              ctx.out().elements());
                              }});
  // x · gate(x), as Mul(x, gate(x)) rounds it: the gate's own function, one product.
  t.emplace_back(kernel_key(kMemledgerDomain, kSelfGatedOp),
                 Kernel{.check = check_self_gated, .run = [](KernelContext& ctx) {
                          const float* x = ctx.in(0).as<float>();
                          float* y = ctx.out().as<float>();
                          const int64_t count = ctx.out().elements();
                          if (ctx.node.string_attr("gate", "") == "Sigmoid") {
                            for (int64_t i = 0; i < count; ++i) y[i] = x[i] * sigmoid(x[i]);
                            return;
                          }
                          const float alpha = ctx.node.float_attr("alpha", kHardSigmoidAlpha);
                          const float beta = ctx.node.float_attr("beta", kHardSigmoidBeta);
                          for (int64_t i = 0; i < count; ++i) y[i] = x[i] * hard_sigmoid(x[i], alpha, beta);
                        }});
}

// ---- Clip ----

template <typename T>
void clip(KernelContext& ctx) {
  T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  if constexpr (std::is_same_v<T, float>) {
    lo = ctx.node.float_attr("min", lo);
    hi = ctx.node.float_attr("max", hi);
  }
  if (ctx.has_input(1) && ctx.in(1).elements() > 0) lo = ctx.in(1).as<T>()[0];
  if (ctx.has_input(2) && ctx.in(2).elements() > 0) hi = ctx.in(2).as<T>()[0];
  const T* x = ctx.in(0).as<T>();
  T* y = ctx.out().as<T>();
  for (int64_t i = 0, n = ctx.out().elements(); i < n; ++i) y[i] = std::min(hi, std::max(lo, x[i]));
}

constexpr std::initializer_list<DType> kArithmeticTypes = {DType::kFloat32, DType::kFloat64, DType::kInt8,
                                                           DType::kUInt8,   DType::kInt32,   DType::kInt64};

// Calls f(T{}) for the C type of an arithmetic dtype.
template <typename F>
void with_arithmetic_type(DType type, F&& f) {
  switch (type) {
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat64:
      return f(double{});
    case DType::kInt8:
      return f(int8_t{});
    case DType::kUInt8:
      return f(uint8_t{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    default:
      ML_CHECK(false, "with_arithmetic_type({})", dtype_name(type));
  }
}

std::string check_same_arithmetic(const Graph& g, const Node& n, size_t count) {
  if (auto why = check_dtypes(g, n, 0, kArithmeticTypes); !why.empty()) return why;
  const DType type = g.value(n.inputs.at(0)).dtype;
  for (size_t i = 1; i < std::min(count, n.inputs.size()); ++i)
    if (n.inputs[i].valid() && g.value(n.inputs[i]).dtype != type)
      return fmt::format("input {} is {}, input 0 {}", i, dtype_name(g.value(n.inputs[i]).dtype), dtype_name(type));
  return {};
}

// ---- binary, with broadcasting ----

// y = f(a, b) over the output's shape; a and b broadcast to it through zero strides.
template <typename Y, typename A, typename B, typename F>
void broadcast_binary(const InputView& a, const InputView& b, OutputView& y, F f) {
  StridedLoop<3> loop(
      y.shape, {dense_strides(y.shape), broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)});
  const A* pa = a.as<A>();
  const B* pb = b.as<B>();
  Y* py = y.as<Y>();
  loop.for_each_row([&](const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& s) {
    Y* out = py + off[0];
    const A* x = pa + off[1];
    const B* z = pb + off[2];
    if (s[1] == 1 && s[2] == 1) {
      for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], z[i]);
    } else if (s[1] == 1 && s[2] == 0) {
      const B zv = *z;
      for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], zv);
    } else if (s[1] == 0 && s[2] == 1) {
      const A xv = *x;
      for (int64_t i = 0; i < n; ++i) out[i] = f(xv, z[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = f(x[i * s[1]], z[i * s[2]]);
    }
  });
}

template <typename Op>
Kernel binary_kernel(Op op) {
  return Kernel{
      .check = [](const Graph& g, const Node& n) { return check_same_arithmetic(g, n, 2); },
      .run =
          [op](KernelContext& ctx) {
            with_arithmetic_type(ctx.in(0).dtype, [&](auto tag) {
              using T = decltype(tag);
              broadcast_binary<T, T, T>(ctx.in(0), ctx.in(1), ctx.out(), [&](T a, T b) { return op(a, b); });
            });
          },
  };
}

// Max, Min, Sum, Mean over one or more inputs: y = in0 broadcast, then y = f(y, in_i).
// Only input 0 may share y's buffer: later inputs are read after y is first written.
template <typename Op>
Kernel variadic_kernel(Op op, bool mean) {
  return Kernel{
      .check = [](const Graph& g, const Node& n) { return check_same_arithmetic(g, n, n.inputs.size()); },
      .run =
          [op, mean](KernelContext& ctx) {
            with_arithmetic_type(ctx.in(0).dtype, [&](auto tag) {
              using T = decltype(tag);
              OutputView& y = ctx.out();
              const size_t count = ctx.inputs.size();
              auto f = [&](T a, T b) { return static_cast<T>(op(a, b)); };
              if (count == 1) {
                strided_copy(y.data, dense_strides(y.shape), ctx.in(0).data,
                             broadcast_strides(ctx.in(0).shape, y.shape), y.shape, sizeof(T));
              } else {
                broadcast_binary<T, T, T>(ctx.in(0), ctx.in(1), y, f);
              }
              const InputView acc{.dtype = y.dtype, .shape = y.shape, .data = y.data};
              for (size_t i = 2; i < count; ++i) broadcast_binary<T, T, T>(acc, ctx.in(i), y, f);
              if (mean) {
                T* p = y.as<T>();
                for (int64_t i = 0, n = y.elements(); i < n; ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(count));
              }
            });
          },
  };
}

// Pow: float base with a float or integer exponent, or integer base with the same integer
// type or a float exponent (ONNX's test_pow_types_*).
Kernel pow_kernel() {
  return Kernel{
      .check =
          [](const Graph& g, const Node& n) {
            const DType base = g.value(n.inputs.at(0)).dtype, exponent = g.value(n.inputs.at(1)).dtype;
            const bool ok_base = base == DType::kFloat32 || base == DType::kInt32 || base == DType::kInt64;
            const bool ok_exp = exponent == DType::kFloat32 || exponent == DType::kInt32 || exponent == DType::kInt64;
            if (!ok_base || !ok_exp) return fmt::format("Pow of {} by {}", dtype_name(base), dtype_name(exponent));
            return std::string();
          },
      .run =
          [](KernelContext& ctx) {
            const InputView& a = ctx.in(0);
            const InputView& b = ctx.in(1);
            auto dispatch_b = [&](auto atag) {
              using A = decltype(atag);
              with_arithmetic_type(b.dtype, [&](auto btag) {
                using B = decltype(btag);
                broadcast_binary<A, A, B>(a, b, ctx.out(), [](A x, B e) {
                  if constexpr (std::is_same_v<A, float>)
                    return std::pow(x, static_cast<float>(e));
                  else
                    return static_cast<A>(std::pow(static_cast<double>(x), static_cast<double>(e)));
                });
              });
            };
            with_arithmetic_type(a.dtype, dispatch_b);
          },
  };
}

// ---- Affine: y = x·scale + bias ----

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define ML_ELEMENTWISE_CLONES \
  __attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=off", "tree-vectorize")))
#else
#define ML_ELEMENTWISE_CLONES
#endif

// The per-channel row: contiguous x and y, one scale and one bias. An AVX2 clone keeps
// cache-resident tensors near memcpy speed. Contraction into a fused multiply-add is off,
// so both clones round alike (a product, then a sum), as the historical rule does.
ML_ELEMENTWISE_CLONES
void affine_row(float* out, const float* in, float s, float b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float p = in[i] * s;
    out[i] = p + b;
  }
}

// The current rule computes in one pass. The historical rule, as the seed's kernel did,
// multiplies into a workspace the size of the output and then adds the bias from it.
void affine(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const InputView& scale = ctx.in(1);
  const InputView& bias = ctx.in(2);
  OutputView& y = ctx.out();
  if (affine_rule(ctx.node) == AffineRule::kHistorical) {
    ML_CHECK(static_cast<int64_t>(ctx.workspace.size()) >= y.elements() * 4, "affine workspace too small");
    OutputView product{.dtype = DType::kFloat32, .shape = y.shape, .data = ctx.workspace.data()};
    broadcast_binary<float, float, float>(x, scale, product, [](float a, float b) { return a * b; });
    const InputView in_product{.dtype = DType::kFloat32, .shape = y.shape, .data = ctx.workspace.data()};
    broadcast_binary<float, float, float>(in_product, bias, y, [](float a, float b) { return a + b; });
    return;
  }
  StridedLoop<4> loop(y.shape, {dense_strides(y.shape), broadcast_strides(x.shape, y.shape),
                                broadcast_strides(scale.shape, y.shape), broadcast_strides(bias.shape, y.shape)});
  const float* px = x.as<float>();
  const float* ps = scale.as<float>();
  const float* pb = bias.as<float>();
  float* py = y.as<float>();
  loop.for_each_row([&](const std::array<int64_t, 4>& off, int64_t n, const std::array<int64_t, 4>& st) {
    float* out = py + off[0];
    const float* in = px + off[1];
    const float* s = ps + off[2];
    const float* b = pb + off[3];
    if (st[1] == 1 && st[2] == 0 && st[3] == 0) {
      affine_row(out, in, *s, *b, n);
    } else if (st[1] == 1 && st[2] == 1 && st[3] == 1) {
      for (int64_t i = 0; i < n; ++i) out[i] = in[i] * s[i] + b[i];
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = in[i * st[1]] * s[i * st[2]] + b[i * st[3]];
    }
  });
}

}  // namespace

void add_elementwise_kernels(KernelTable& t) {
  add_unary(t);
  t.emplace_back(
      ":Clip", Kernel{
                   .check = [](const Graph& g, const Node& n) { return check_same_arithmetic(g, n, n.inputs.size()); },
                   .run =
                       [](KernelContext& ctx) {
                         with_arithmetic_type(ctx.in(0).dtype, [&](auto tag) { clip<decltype(tag)>(ctx); });
                       },
               });
  t.emplace_back(":Add", binary_kernel([](auto a, auto b) { return static_cast<decltype(a)>(a + b); }));
  t.emplace_back(":Sub", binary_kernel([](auto a, auto b) { return static_cast<decltype(a)>(a - b); }));
  t.emplace_back(":Mul", binary_kernel([](auto a, auto b) { return static_cast<decltype(a)>(a * b); }));
  t.emplace_back(":Div", binary_kernel([](auto a, auto b) {
                   using T = decltype(a);
                   if constexpr (std::is_integral_v<T>) {
                     if (b == 0) fail("Div: integer division by zero");
                     // INT_MIN / -1 traps (SIGFPE) on x86; the quotient wraps, as NumPy's does.
                     if constexpr (std::is_signed_v<T>)
                       if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
                   }
                   return static_cast<T>(a / b);
                 }));
  t.emplace_back(":Pow", pow_kernel());
  t.emplace_back(":Max", variadic_kernel([](auto a, auto b) { return std::max(a, b); }, false));
  t.emplace_back(":Min", variadic_kernel([](auto a, auto b) { return std::min(a, b); }, false));
  t.emplace_back(":Sum", variadic_kernel([](auto a, auto b) { return a + b; }, false));
  t.emplace_back(":Mean", variadic_kernel([](auto a, auto b) { return a + b; }, true));
  t.emplace_back(kernel_key(kMemledgerDomain, kAffineOp), Kernel{
                                                              .check =
                                                                  [](const Graph& g, const Node& n) {
                                                                    return check_float_inputs(g, n, {0, 1, 2});
                                                                  },
                                                              .run = affine,
                                                          });
}

}  // namespace memledger::exec
