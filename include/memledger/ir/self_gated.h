// memledger.SelfGated: y = x · gate(x), element by element — the activations exporters write
// as two nodes, SiLU as Mul(x, Sigmoid(x)) and hard-swish as Mul(x, HardSigmoid(x)), whose
// two full buffers are live at once at the gate. One node computes it in place over x (its
// op record says so), bit-identical to the pair: the gate is the function its own operator's
// reference kernel computes, times x, rounded once as Mul rounds (exec/activation_functions.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "memledger/ir/graph.h"

namespace memledger {

inline constexpr std::string_view kSelfGatedOp = "SelfGated";

bool is_self_gated(const Node& node);

// Whether `gate` (a node reading x) is one SelfGated computes: a Sigmoid or a HardSigmoid.
bool is_self_gate(const Node& gate);

// The pair y = Mul(x, gate(x)) that one SelfGated node computes: a Sigmoid or HardSigmoid of x
// that only this Mul reads (not a graph output), x, the gate's output and y of one shape, all
// float32 (`types` kFloat32) or all 8-bit quantized (kQuantized8: an int8 model's SiLU, whose
// y is a function of x's 256 codes). The one matcher of the pattern: fit's fusion and the
// fast kernels' swish and integer gate table all ask it.
struct SelfGatedPair {
  NodeId gate;
  int x = -1;  // which of the Mul's two inputs is x
};
enum class GateTypes : uint8_t { kFloat32, kQuantized8 };
std::optional<SelfGatedPair> match_self_gated(const Graph& graph, const Node& mul,
                                              GateTypes types = GateTypes::kFloat32);

// The node y = SelfGated(x) for the pair Mul(x, gate(x)): attribute `gate` names the
// gate's operator, its own attributes (HardSigmoid's alpha and beta) come along.
Node self_gated_node(ValueId x, const Node& gate, ValueId y, const std::string& name);

// The kernel's check: a float32 input, an output of its type, a gate it knows. Returns why
// the node breaks it, or empty.
std::string check_self_gated(const Graph& graph, const Node& node);

}  // namespace memledger
