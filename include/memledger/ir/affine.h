// The fused per-channel affine operator y = x·scale + bias (DESIGN.md §5), an operator of
// the IR in the "memledger" domain. ONNX models reach it through Mul + Add or inference
// BatchNormalization (passes/fuse_affine); export lowers it back to Mul + Add.
// scale and bias broadcast to x by ONNX's rules and never grow it: compact ([1,C,1,1])
// or, as some compilers store them, expanded to x's full shape.
#pragma once

#include <string>
#include <string_view>

#include "memledger/ir/graph.h"

namespace memledger {

inline constexpr std::string_view kMemledgerDomain = "memledger";
inline constexpr std::string_view kAffineOp = "Affine";

// The two kernel rules of the seed article: the historical kernel multiplies into a
// workspace the size of its output and adds the bias from there; the current one
// declares no workspace and may write its output over its input.
enum class AffineRule { kCurrent, kHistorical };

std::string_view to_string(AffineRule rule);
bool is_affine(const Node& node);
AffineRule affine_rule(const Node& node);

// Appends y = Affine(x, scale, bias) with the given rule; y has x's type and roles.
ValueId add_affine(Graph& graph, ValueId x, ValueId scale, ValueId bias, AffineRule rule, const std::string& name);

// Standard ONNX has no such operator: every Affine becomes Mul(x, scale) → `<y>_scaled` →
// Add(·, bias) → y, in place in the execution order (nodes `<name>_mul`, `<name>_add`; the
// intermediate has y's type and roles). This is the form an exported file holds, so a plan
// of the lowered graph is a plan of that file. Returns the number of Affines lowered.
int lower_affine(Graph& graph);

}  // namespace memledger
