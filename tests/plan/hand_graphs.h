// Graphs small enough to plan by hand, shared by the liveness, ledger, JSON report and diff
// tests. Under the host profile (NCHW, 64-byte alignment, constants resident) a float32
// [1,4,4,4] tensor is 256 B logical and physical; the int64 [2] shape of the Reshape is
// 16 B logical, 64 B physical.
#pragma once

#include <cstdint>
#include <utility>

#include "memledger/ir/graph.h"

namespace memledger::hand {

inline Value f32(const char* name, Shape shape = {1, 4, 4, 4}) {
  return {.name = name, .dtype = DType::kFloat32, .shape = std::move(shape)};
}

// The alias chain: x → Relu → a → Sigmoid → b → Reshape([1,64]) → c → Exp → y (output).
// Steps 0 Relu, 1 Sigmoid, 2 Reshape, 3 Exp. Sigmoid and Exp may write over their input,
// Reshape's output is its input's bytes: b takes a's storage, c b's, y c's, so a owns
// 256 B for steps 0–3. x is a graph input and not donated: a cannot take it.
inline Graph alias_chain() {
  Graph g;
  const ValueId x = g.add_input(f32("x"));
  Tensor shape(DType::kInt64, {2});
  shape.data<int64_t>()[0] = 1;
  shape.data<int64_t>()[1] = 64;
  const ValueId s = g.add_constant("shape", shape);
  const ValueId a = g.add_value(f32("a"));
  const ValueId b = g.add_value(f32("b"));
  const ValueId c = g.add_value(f32("c", {1, 64}));
  const ValueId y = g.add_value(f32("y", {1, 64}));
  g.add_node({.name = "relu", .op = "Relu", .inputs = {x}, .outputs = {a}});
  g.add_node({.name = "sigmoid", .op = "Sigmoid", .inputs = {a}, .outputs = {b}});
  g.add_node({.name = "reshape", .op = "Reshape", .inputs = {b, s}, .outputs = {c}});
  g.add_node({.name = "exp", .op = "Exp", .inputs = {c}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

// The bypass: x → Relu → a → Sigmoid → b, then Add(b, a) → y (output). Steps 0 Relu,
// 1 Sigmoid, 2 Add. At step 1, a is still read at step 2 (the bypass), so b may not take
// a's bytes; at step 2 both inputs are read for the last time, and y takes b's (input 0).
inline Graph bypass() {
  Graph g;
  const ValueId x = g.add_input(f32("x"));
  const ValueId a = g.add_value(f32("a"));
  const ValueId b = g.add_value(f32("b"));
  const ValueId y = g.add_value(f32("y"));
  g.add_node({.name = "relu", .op = "Relu", .inputs = {x}, .outputs = {a}});
  g.add_node({.name = "sigmoid", .op = "Sigmoid", .inputs = {a}, .outputs = {b}});
  g.add_node({.name = "add", .op = "Add", .inputs = {b, a}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

}  // namespace memledger::hand
