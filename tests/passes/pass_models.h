// Small models of the pass tests and the seed matrix, built through the library.
#pragma once

#include <string>

#include "memledger/ir/affine.h"
#include "pass_test_util.h"

namespace memledger::testing {

// x → Mul(scale) → Add(bias) with both parameters per channel, stored at `stored`.
// With `bypass`, x also feeds a later Add (DESIGN.md §5 variant D).
inline Graph mul_add(const Shape& x_shape, const Shape& stored, bool bypass = false) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = x_shape, .roles = kNCHW});
  const ValueId s = g.add_constant("scale", channel_values(stored, 0.5f, 0.1f), kNCHW);
  const ValueId b = g.add_constant("bias", channel_values(stored, -0.2f, 0.05f), kNCHW);
  const ValueId m = add_act(g, "m", x_shape), y = add_act(g, "y", x_shape);
  g.add_node({.name = "mul", .op = "Mul", .inputs = {x, s}, .outputs = {m}});
  g.add_node({.name = "add", .op = "Add", .inputs = {m, b}, .outputs = {y}});
  if (bypass) {
    const ValueId z = add_act(g, "z", x_shape);
    g.add_node({.name = "bypass", .op = "Add", .inputs = {y, x}, .outputs = {z}});
    g.mark_output(z);
  } else {
    g.mark_output(y);
  }
  return g;
}

// The seed thread: Conv1d(64, 64, k=1, groups=4) over x.repeat(1, 4, 1), x [1,16,N].
inline Graph grouped_conv_over_repeat(const std::string& how) {
  Graph g;
  const int64_t n = 10;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 16, n}});
  const ValueId xr = add_act(g, "x_repeated", {1, 64, n});
  if (how == "tile") {
    g.add_node({.name = "repeat", .op = "Tile", .inputs = {x, add_int64(g, "repeats", {1, 4, 1})}, .outputs = {xr}});
  } else if (how == "concat") {
    g.add_node({.name = "repeat",
                .op = "Concat",
                .inputs = {x, x, x, x},
                .outputs = {xr},
                .attributes = {{"axis", int64_t{1}}}});
  } else {
    const ValueId u = add_act(g, "x_unsq", {1, 1, 16, n}), e = add_act(g, "x_exp", {1, 4, 16, n});
    g.add_node({.name = "unsqueeze", .op = "Unsqueeze", .inputs = {x, add_int64(g, "axes", {1})}, .outputs = {u}});
    g.add_node(
        {.name = "expand", .op = "Expand", .inputs = {u, add_int64(g, "eshape", {1, 4, 16, n})}, .outputs = {e}});
    g.add_node(
        {.name = "reshape", .op = "Reshape", .inputs = {e, add_int64(g, "rshape", {1, 64, n})}, .outputs = {xr}});
  }
  const ValueId w = g.add_constant("w", pattern(DType::kFloat32, {64, 16, 1}, 3));
  const ValueId b = g.add_constant("b", pattern(DType::kFloat32, {64}, 5));
  const ValueId y = add_act(g, "y", {1, 64, n});
  g.add_node({.name = "conv",
              .op = "Conv",
              .inputs = {xr, w, b},
              .outputs = {y},
              .attributes = {{"group", int64_t{4}}, {"kernel_shape", std::vector<int64_t>{1}}}});
  g.mark_output(y);
  return g;
}

// x → Relu → Affine(scale, bias) → Relu → y.
inline Graph affine_between_relus(float scale, float bias) {
  Graph g;
  const Shape xs{1, 4, 3, 3};
  const ValueId x = g.add_input({.name = "x", .shape = xs, .roles = kNCHW});
  const ValueId r = add_act(g, "r", xs);
  g.add_node({.name = "relu0", .op = "Relu", .inputs = {x}, .outputs = {r}});
  const ValueId a = add_affine(g, r, g.add_constant("scale", channel_values({1, 4, 1, 1}, scale, 0), kNCHW),
                               g.add_constant("bias", channel_values({1, 4, 1, 1}, bias, bias == 0 ? 0 : 0.1f), kNCHW),
                               AffineRule::kCurrent, "affine");
  const ValueId y = add_act(g, "y", xs);
  g.add_node({.name = "relu1", .op = "Relu", .inputs = {a}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

// x → Q(s1) → DQ(s1) → Q(s2) → DQ(s2) → y: the middle DQ → Q pair is a requantize and stays
// when s1 ≠ s2; with s1 == s2 it is an identity. The first pair is int8 with zero point 0;
// the second has type `t2` and zero point `z2` (uint8 with 128: the same range).
inline Graph qdq_chain(float s2, DType t2 = DType::kInt8, int z2 = 0) {
  Graph g;
  const Shape xs{1, 4, 3, 3};
  const ValueId x = g.add_input({.name = "x", .shape = xs, .roles = kNCHW});
  const auto scalar = [&](const std::string& name, float v) {
    Tensor t(DType::kFloat32, {});
    t.data<float>()[0] = v;
    return g.add_constant(name, t);
  };
  const auto zero = [&](const std::string& name, DType t = DType::kInt8, int z = 0) {
    Tensor zt(t, {});
    zt.set_element_from_double(0, z);
    return g.add_constant(name, zt);
  };
  const ValueId q1 = add_act(g, "q1", xs, DType::kInt8), f1 = add_act(g, "f1", xs);
  const ValueId q2 = add_act(g, "q2", xs, t2), y = add_act(g, "y", xs);
  g.add_node({.name = "q1", .op = "QuantizeLinear", .inputs = {x, scalar("s1", 0.05f), zero("z1")}, .outputs = {q1}});
  g.add_node(
      {.name = "dq1", .op = "DequantizeLinear", .inputs = {q1, scalar("s1b", 0.05f), zero("z1b")}, .outputs = {f1}});
  g.add_node(
      {.name = "q2", .op = "QuantizeLinear", .inputs = {f1, scalar("s2", s2), zero("z2", t2, z2)}, .outputs = {q2}});
  g.add_node({.name = "dq2",
              .op = "DequantizeLinear",
              .inputs = {q2, scalar("s2b", s2), zero("z2b", t2, z2)},
              .outputs = {y}});
  g.mark_output(y);
  return g;
}

// An int8 QDQ affine: x (int8) → DequantizeLinear(0.05) → Mul(scale) → Add(bias) →
// QuantizeLinear(s2) → y (int8), the form quantized exporters write. With unit scale and
// zero bias only DequantizeLinear → QuantizeLinear is left: one requantize when s2 ≠ 0.05.
inline Graph qdq_affine(float s2, float scale, float bias) {
  Graph g;
  const Shape xs{1, 4, 3, 3};
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kInt8, .shape = xs, .roles = kNCHW});
  const auto scalar = [&](const std::string& name, float v) {
    Tensor t(DType::kFloat32, {});
    t.data<float>()[0] = v;
    return g.add_constant(name, t);
  };
  const ValueId f = add_act(g, "f", xs), m = add_act(g, "m", xs), a = add_act(g, "a", xs);
  const ValueId y = add_act(g, "y", xs, DType::kInt8);
  g.add_node({.name = "dq",
              .op = "DequantizeLinear",
              .inputs = {x, scalar("s1", 0.05f), g.add_constant("z1", Tensor(DType::kInt8, {}))},
              .outputs = {f}});
  g.add_node({.name = "mul",
              .op = "Mul",
              .inputs = {f, g.add_constant("scale", channel_values({1, 4, 1, 1}, scale, 0), kNCHW)},
              .outputs = {m}});
  g.add_node({.name = "add",
              .op = "Add",
              .inputs = {m, g.add_constant("bias", channel_values({1, 4, 1, 1}, bias, 0), kNCHW)},
              .outputs = {a}});
  g.add_node({.name = "q",
              .op = "QuantizeLinear",
              .inputs = {a, scalar("s2", s2), g.add_constant("z2", Tensor(DType::kInt8, {}))},
              .outputs = {y}});
  g.mark_output(y);
  return g;
}

}  // namespace memledger::testing
