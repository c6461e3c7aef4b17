// The op table (DESIGN.md §2): one record per operator holding every fact about it that is
// not computing it — its shape rule (output types from input types, attributes and
// constant inputs, with the attribute checks; ir/shape_rule.h), how its axes relate (axis roles), which inputs
// broadcast, whether its output may be written over an input (in place) or *is* an input's bytes (alias), the workspace
// its kernel declares, the simulator's tile model, its window geometry, which activations
// a Conv may fuse, which fast-executor kernel family runs it. plan/, sim/, passes/, lint/ and onnx/ read
// these records and keep no operator lists of their own; exec/ attaches a run function to a record. An operator the
// table does not know can still be planned when the device profile declares its rules ([ops.NAME]).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/device/profile.h"
#include "memledger/ir/graph.h"
#include "memledger/ir/shape_rule.h"

namespace memledger {

// TFLite's builtin operators ("CONV_2D") and its custom operators (their custom_code).
inline constexpr std::string_view kTfliteDomain = "tflite";
inline constexpr std::string_view kTfliteCustomDomain = "tflite.custom";

// What a node's kernel promises before it runs (DESIGN.md §4.4, P5): the workspace it
// uses, sized from shapes and the device profile, and which inputs' buffers its (single)
// output may take. Whether taking one is legal (no later reader) is the planner's decision.
struct KernelContract {
  int64_t workspace_bytes = 0;
  std::vector<int> overwritable_inputs;
};

// How an operator's axes carry meaning from inputs to outputs (axis-role propagation).
enum class RoleRule : uint8_t {
  kNone,          // states nothing
  kChannelFirst,  // data input and output are N, C, spatial (Conv, pools, BatchNormalization)
  kElementwise,   // output axis i is axis i of every data operand, right-aligned
  kSameAxes,      // same axes, extents may differ (Concat, Pad, Slice, Resize, Split ...)
  kBroadcastTo,   // data input aligns right onto a larger output (Expand)
  kTranspose,     // axes permuted by `perm`
  kReduction,     // with keepdims, the same axes
  kQuantize,      // elementwise, and a rank-1 scale names the axis it runs along
};

// The output may be written over an input.
enum class InPlaceRule : uint8_t {
  kNone,
  kElementwise,  // over any of the first `in_place_inputs` inputs of the output's shape and dtype
  kAlias,        // the output *is* input 0's bytes when both are stored alike (Reshape, Squeeze ...)
};

// The simulator's tile model (sim/operator_model).
enum class TileModel : uint8_t { kGeneric, kElementwise, kConv, kPool, kGlobalPool, kGemm, kMatMul };

// A sliding window over spatial axes (kernel_shape, strides, pads, dilations attributes).
enum class WindowKind : uint8_t { kNone, kConv, kPool };

// The oneDNN-backed family exec/fast runs the operator with (one prepare function each);
// kNone: the fast set has no kernel for it and the reference kernel runs it.
enum class FastKernel : uint8_t {
  kNone,
  kConv,
  kConvTranspose,
  kPool,        // MaxPool, AveragePool
  kGlobalPool,  // GlobalAveragePool, GlobalMaxPool
  kGemm,
  kMatMul,
  kActivation,  // one oneDNN eltwise algorithm, or the reference's element function as exec/fast's own loop
  kBinary,      // one oneDNN binary algorithm over two operands
  kBatchNorm,
  kSoftmax,  // Softmax, LogSoftmax
  kConcat,
  kTranspose,
  kReduceMean,
  kCopy,  // the output is the input's bytes (reshape-like, Identity, Dropout at inference)
  kSlice,
  kTfliteConv,  // TFLite's CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED: int8, NHWC as the file has it
  kQuantize,    // QuantizeLinear per tensor: float to 8-bit codes in the fast set's own loop
};

// How a box of the output's H and W maps to boxes of the inputs, for patch-based execution
// (plan/patch_rules): the operator can run on one patch of its output.
enum class PatchRule : uint8_t {
  kNone,
  kPointwise,   // element by element: the same box of every data input (other inputs broadcast over H, W)
  kWindow,      // Conv and pools: the box widened by the window's halo, clipped to the image
  kConcat,      // Concat over channels: the same box of every input
  kSlice,       // Slice of H and W: the box shifted by the starts
  kGlobalPool,  // a mean over all of H and W: computed in row strips before the patches, read whole by them
};

// The operator's integer form (DESIGN.md §11, ir/quantization.h): over quantized data values
// the operator of the same name is the integer operator, and the ONNX importer folds
// DequantizeLinear → op → QuantizeLinear into it (onnx/fold_qdq). kNone: no integer form;
// the operator stays float between its DequantizeLinear and QuantizeLinear.
enum class IntegerForm : uint8_t {
  kNone,
  kRequantizes,  // computes on the integers; its output's scale and zero point may differ from its inputs'
  kSameQuant,    // only moves integers (Reshape, Transpose ...): output quantized exactly as its input
};

struct IntegerRule {
  IntegerForm form = IntegerForm::kNone;
  int quantized_inputs = 1;     // leading inputs that are quantized integers; -1: all (Concat); others stay as they are
  int weight_input = -1;        // the one quantized input that may be quantized per axis (per-channel weights)
  int bias_input = -1;          // an int32 bias in the accumulator's units: scale s_x·s_w, zero point 0
  int weight_channel_axis = 0;  // the weight axis that indexes output channels; negative: from the end
  std::string_view transposed_by;  // an attribute that, when 1, swaps a matrix weight's axes (Gemm's transB)
  // The fast set runs the integer form too, with the record's FastKernel family: Conv and Gemm
  // as oneDNN's int8 convolution where the machine has int8 dot products (exec/fast/isa.h),
  // Conv elsewhere as an exact f32 convolution with the reference's rounding; elementwise ones
  // and GlobalAveragePool as its own loops on every machine. Where its kernel refuses the
  // node, the reference integer kernel.
  bool fast = false;
};

// An operator that writes an integer operator out with its quantization parameters as
// inputs (QLinearConv, ConvInteger ...): the importer reads it as the operator `of` over
// quantized values (onnx/qlinear_ops), the one representation of integer operators.
enum class QLinearOperands : uint8_t {
  kNone,
  kTriples,     // (x, x_scale, x_zero_point) per data input, y_scale, y_zero_point, then the rest (a bias)
  kZeroPoints,  // the data inputs, then their zero points (optional); an int32 output, no requantization
};

struct QLinearForm {
  std::string_view of;  // the operator it is the integer form of; empty: none
  QLinearOperands operands = QLinearOperands::kNone;
  int data_inputs = 2;
};

// OpRecord::identity_operand of an operator without one.
inline constexpr double kNoIdentityOperand = -1.0;

struct OpRecord;
using WorkspaceRule = int64_t (*)(const Graph&, const Node&, const DeviceProfile&);
using ContractRule = KernelContract (*)(const Graph&, const Node&, const DeviceProfile&);
using MacsRule = int64_t (*)(const Graph&, const Node&);

struct OpRecord {
  std::string_view domain;  // "" for ONNX's default domain, "memledger" for ours
  std::string_view name;
  int since_version = 1;  // the first opset whose definition this record describes

  // Shapes (ir/shape_rules.cpp, by family). Null: the importer asks libonnx's inference.
  ShapeRule shape = nullptr;
  ValueRule value = nullptr;  // evaluation on small integer constants (shape computations)

  // Axes.
  RoleRule roles = RoleRule::kNone;
  int data_inputs = -1;     // leading inputs that share the output's axes; -1: all of them
  bool broadcasts = false;  // numpy-style broadcasting among the data inputs
  // Its data operands may be swapped without changing the result (Add, Mul, Max, ...): a
  // kernel that wants the full-shape operand first may put it there.
  bool commutative = false;
  // The constant operand that gives back the other one unchanged (x + 0, x · 1, x − 0, x / 1):
  // as the second operand, or either one where commutative. kNoIdentityOperand: none.
  // passes/unit_coefficient drops such nodes.
  double identity_operand = kNoIdentityOperand;
  int channel_parameters_from = -1;  // channel-first ops: rank-1 inputs from here on are [C]
  WindowKind window = WindowKind::kNone;
  int weight_input = -1;            // a window operator's weights: [M, C/g, k...], or [C, M/g, k...] when transposed
  bool weights_transposed = false;  // ConvTranspose

  // Memory.
  InPlaceRule in_place = InPlaceRule::kNone;
  int in_place_inputs = 1;
  WorkspaceRule workspace = nullptr;  // null: no workspace
  ContractRule contract = nullptr;    // overrides in_place and workspace when set
  // A state the operator carries from one run to the next (TFLite's SVDF): input
  // `state_input` is a constant holding the initial state, planned as a persistent buffer
  // (live for the whole program, in the arena), and output `state_output`, the new state,
  // is written over it, so it owns no bytes of its own. -1: none.
  int state_input = -1;
  int state_output = -1;

  // Fusion (exec/fast). An activation a Conv may apply to its own output as a post-op
  // (one value in, the same shape out, no state), and whether it is idempotent: applied to
  // its own output it gives the same values, so a node that computes it once more after
  // the fused Conv changes nothing.
  bool conv_post_op = false;
  bool idempotent = false;
  FastKernel fast = FastKernel::kNone;  // the fast executor's family for it

  // Integer form: what the importer folds QDQ into, and what the integer kernels compute.
  IntegerRule integer = {};
  QLinearForm qlinear = {};

  // Simulator.
  TileModel tile = TileModel::kGeneric;

  // Patch-based execution (plan/patch) and the cost it reports.
  PatchRule patch = PatchRule::kNone;
  MacsRule macs = nullptr;  // multiply-accumulates of one node; null: none counted

  bool is(std::string_view op_domain, std::string_view op) const { return domain == op_domain && name == op; }
};

// Every record, in the table's order.
std::span<const OpRecord> op_table();
// The record for `node`'s operator at the graph's opset, or null when the table does not
// know it. "ai.onnx" counts as the default domain.
const OpRecord* find_op(const Node& node, int64_t opset = 1000);
const OpRecord* find_op(std::string_view domain, std::string_view name, int64_t opset = 1000);

// The contract of `node` under `profile`: from its record, else from the profile's
// declaration of the operator ([ops.NAME]); an Error naming the node and the operator when
// neither knows it.
KernelContract op_contract(const Graph& graph, NodeId node, const DeviceProfile& profile);
// Whether `op_contract` would succeed: the table or the profile knows the operator.
bool op_is_known(const Node& node, const DeviceProfile& profile);

// Whether `node`'s operator broadcasts its data operands (numpy style).
bool broadcasts(const Node& node);

// "Conv" or "memledger.Affine": an operator's name for messages.
std::string op_name(const Node& node);

}  // namespace memledger
