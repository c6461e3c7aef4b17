// The operators that code outside the op table names on purpose: a rewrite matching a
// pattern (fold-batchnorm's Conv → BatchNormalization, repeat-to-plain-conv's Tile / Concat /
// Unsqueeze / Expand / Reshape before a grouped Conv) or a kernel table keyed by operator
// (the reference activations, the fast eltwise algorithms). Each is a constant here, so a
// misspelt name does not compile, and every one is a record of the op table
// (tests/ir/op_names_test.cpp), so none can drift from it.
#pragma once

#include <span>
#include <string_view>

// X(NAME): one entry per operator of the default domain named outside the op table.
// clang-format off
#define MEMLEDGER_NAMED_OPS(X) \
  X(Abs) X(Add) X(BatchNormalization) X(Ceil) X(Clip) X(Concat) X(Conv) X(Div) \
  X(Elu) X(Erf) X(Exp) X(Expand) X(Floor) X(HardSigmoid) X(HardSwish) X(LeakyRelu) \
  X(Log) X(Max) X(Min) X(Mul) X(Neg) X(Pow) X(Reciprocal) X(Relu) X(Reshape) \
  X(Sigmoid) X(Softplus) X(Sqrt) X(Sub) X(Tanh) X(Tile) X(Unsqueeze)
// clang-format on

namespace memledger::op {

#define MEMLEDGER_NAMED_OP_CONSTANT(name) inline constexpr std::string_view k##name = #name;
MEMLEDGER_NAMED_OPS(MEMLEDGER_NAMED_OP_CONSTANT)
#undef MEMLEDGER_NAMED_OP_CONSTANT

// Every constant above, in that order.
std::span<const std::string_view> named_ops();

}  // namespace memledger::op
