// The op table's records. Adding an operator is one record here (plus, to run it, one
// kernel in exec/); nothing else in the code keeps a list of operator names.
#include "memledger/ir/op_table.h"

#include <algorithm>
#include <map>

#include "ir/op_table_tflite.h"
#include "ir/shape_rules.h"
#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/device/tensor_layout.h"
#include "memledger/ir/accumulate_pool.h"
#include "memledger/ir/affine.h"
#include "memledger/ir/integer_node.h"
#include "memledger/ir/self_gated.h"
#include "memledger/ir/window.h"
#include "memledger/ir/write_patch.h"

namespace memledger {
namespace {

// ---- contract rules ----

KernelContract elementwise_contract(const Graph& g, const Node& node, size_t count) {
  KernelContract contract;
  const Value& out = g.value(node.outputs.at(0));
  for (size_t i = 0; i < std::min(count, node.inputs.size()); ++i) {
    if (!node.inputs[i].valid()) continue;
    const Value& in = g.value(node.inputs[i]);
    if (in.shape == out.shape && in.dtype == out.dtype) contract.overwritable_inputs.push_back(static_cast<int>(i));
  }
  return contract;
}

// The output is input 0's bytes when both are stored in logical order with the same size:
// then they are the same byte sequence (a reshape-like copy does nothing).
KernelContract alias_contract(const Graph& g, const Node& node, const DeviceProfile& profile) {
  KernelContract contract;
  if (node.inputs.empty() || !node.inputs[0].valid()) return contract;
  const Value& in = g.value(node.inputs[0]);
  const Value& out = g.value(node.outputs.at(0));
  if (in.dtype != out.dtype || profile.layout_rules().aligned_run != AlignedRun::kTensor) return contract;
  const Layout a = tensor_layout(profile, in.shape, in.dtype, in.roles);
  const Layout b = tensor_layout(profile, out.shape, out.dtype, out.roles);
  auto logical = [](const Layout& l) {
    for (int i = 0; i < l.rank(); ++i)
      if (l.physical_order()[i] != i) return false;
    return true;
  };
  if (logical(a) && logical(b) && a.bytes() == b.bytes()) contract.overwritable_inputs.push_back(0);
  return contract;
}

// Max, Min, Sum, Mean: two operands may give their buffer, more are folded one by one
// into the output, which may then only start over the first.
KernelContract variadic_contract(const Graph& g, const Node& n, const DeviceProfile&) {
  return elementwise_contract(g, n, n.inputs.size() == 2 ? 2 : 1);
}

// The reference Conv's im2col block (see ir/window.h); none for a pointwise or a direct
// (one channel per group) Conv. A depthwise Conv (group = input channels = output channels)
// computes each output plane in a workspace of one plane and copies it over the input plane
// it consumed (exec/kernels_conv), so its output may take its input's buffer while output
// planes are no larger than input planes in the interpreter's dense storage (the planner
// checks the device's sizes too).
// The integer Conv (exec/kernels_quantized_conv) keeps its accumulators in registers: no
// workspace, except the depthwise plane, in the output's integer type.
KernelContract conv_contract(const Graph& g, const Node& node, const DeviceProfile& profile) {
  const ConvShape s = conv_shape(g, node);
  const bool integer = is_integer_node(g, node);
  if (s.depthwise()) {
    Shape plane;
    for (int a = kMaxSpatial - s.w.spatial; a < kMaxSpatial; ++a) plane.push_back(s.w.out[a]);
    const DType plane_type = integer ? g.value(node.outputs[0]).dtype : DType::kFloat32;
    KernelContract contract{.workspace_bytes = tensor_layout(profile, plane, plane_type, {}).bytes(),
                            .overwritable_inputs = {}};
    if (s.w.out_size() <= s.w.in_size() && g.value(node.inputs[0]).dtype == g.value(node.outputs[0]).dtype)
      contract.overwritable_inputs.push_back(0);
    return contract;
  }
  if (integer || s.w.is_pointwise() || s.direct()) return {};
  const int64_t k = s.cg * s.w.k_size();
  return {.workspace_bytes =
              tensor_layout(profile, {k, im2col_block_rows(s.w, k) * s.w.out[2]}, DType::kFloat32, {}).bytes(),
          .overwritable_inputs = {}};
}

// The fused affine: the seed's historical kernel declares a workspace as big as its
// output; the current one none, and writes over its input.
KernelContract affine_contract(const Graph& g, const Node& n, const DeviceProfile& profile) {
  if (affine_rule(n) == AffineRule::kHistorical) {
    const Value& out = g.value(n.outputs.at(0));
    return KernelContract{.workspace_bytes = tensor_layout(profile, out.shape, out.dtype, out.roles).bytes(),
                          .overwritable_inputs = {}};
  }
  return elementwise_contract(g, n, 1);
}

// memledger.WritePatch writes its patch over input 0, the previous patches' result.
KernelContract write_patch_contract(const Graph&, const Node& n, const DeviceProfile&) {
  KernelContract contract;
  if (!n.inputs.empty() && n.inputs[0].valid()) contract.overwritable_inputs.push_back(0);
  return contract;
}

// ---- multiply-accumulates ----

int64_t elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Each output element: C/group input channels × the kernel's taps (weights [M, C/g, k...]).
int64_t conv_macs(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.outputs.empty() || !n.outputs[0].valid()) return 0;
  const Shape& w = g.value(n.inputs[1]).shape;
  return w.size() < 2 ? 0 : elements(g.value(n.outputs[0]).shape) * elements(Shape(w.begin() + 1, w.end()));
}

// Each input element spreads over M/group maps × the kernel's taps (weights [C, M/g, k...]).
int64_t conv_transpose_macs(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2) return 0;
  const Shape& w = g.value(n.inputs[1]).shape;
  return w.size() < 2 ? 0 : elements(g.value(n.inputs[0]).shape) * elements(Shape(w.begin() + 1, w.end()));
}

int64_t gemm_macs(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.outputs.empty() || !n.outputs[0].valid()) return 0;
  const Shape& a = g.value(n.inputs[0]).shape;
  if (a.size() != 2) return 0;
  return elements(g.value(n.outputs[0]).shape) * (n.int_attr("transA", 0) != 0 ? a[0] : a[1]);
}

int64_t matmul_macs(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.outputs.empty() || !n.outputs[0].valid()) return 0;
  const Shape& a = g.value(n.inputs[0]).shape;
  return a.empty() ? 0 : elements(g.value(n.outputs[0]).shape) * a.back();
}

// ---- record makers ----

using R = RoleRule;
using T = TileModel;

// An elementwise operator of one data operand (extra inputs are attributes-as-inputs).
constexpr OpRecord unary(std::string_view name) {
  return {.name = name,
          .roles = R::kElementwise,
          .data_inputs = 1,
          .in_place = InPlaceRule::kElementwise,
          .in_place_inputs = 1,
          .tile = T::kElementwise,
          .patch = PatchRule::kPointwise};
}
// An operator whose data operands may be swapped.
constexpr OpRecord commutative(OpRecord r) {
  r.commutative = true;
  return r;
}
// An elementwise operator over broadcast operands; its output may take one of the first
// `in_place` operands.
constexpr OpRecord broadcasting(std::string_view name, int in_place = 2, int data_inputs = -1) {
  return {.name = name,
          .roles = R::kElementwise,
          .data_inputs = data_inputs,
          .broadcasts = true,
          .in_place = InPlaceRule::kElementwise,
          .in_place_inputs = in_place,
          .tile = T::kElementwise,
          .patch = PatchRule::kPointwise};
}
// Output axes are the data input's, extents may differ.
constexpr OpRecord same_axes(std::string_view name, int data_inputs = 1) {
  return {.name = name, .roles = R::kSameAxes, .data_inputs = data_inputs};
}
// A reshape-like operator: its output is its input's bytes when stored alike.
constexpr OpRecord alias(std::string_view name) { return {.name = name, .in_place = InPlaceRule::kAlias}; }
constexpr OpRecord plain(std::string_view name) { return {.name = name}; }
constexpr OpRecord channel_first(std::string_view name, int parameters_from = -1) {
  return {.name = name, .roles = R::kChannelFirst, .channel_parameters_from = parameters_from};
}
constexpr OpRecord reduction(std::string_view name) { return {.name = name, .roles = R::kReduction}; }

OpRecord with(OpRecord r, auto&& edit) {
  edit(r);
  return r;
}

// A record with its shape rule (and value rule) set.
OpRecord shaped(OpRecord r, ShapeRule shape, ValueRule value = nullptr) {
  r.shape = shape;
  r.value = value;
  return r;
}

// A record the fast executor runs with the kernel family `kernel`.
OpRecord fast(OpRecord r, FastKernel kernel) {
  r.fast = kernel;
  return r;
}

namespace s = shape_rules;

// A record with its integer form (ir/quantization.h: over quantized values the operator
// of the same name is the integer operator).
OpRecord integer(OpRecord r, IntegerRule rule) {
  r.integer = rule;
  return r;
}
constexpr IntegerRule kRequantizing{.form = IntegerForm::kRequantizes};
// ... whose integer form the fast set runs too (its own loops: exec/fast/kernels_integer_eltwise).
constexpr IntegerRule kFastRequantizing{.form = IntegerForm::kRequantizes, .fast = true};
constexpr IntegerRule kBinaryRequantizing{.form = IntegerForm::kRequantizes, .quantized_inputs = 2, .fast = true};
// The byte movers (Identity, Slice, Transpose, the reshapes): the fast set's own kernels move
// 8-bit codes as they move floats.
constexpr IntegerRule kSameQuant{.form = IntegerForm::kSameQuant, .fast = true};

// An operator, its value rule and its fast-executor family, for the loops below.
struct Valued {
  std::string_view op;
  ValueRule value;
  FastKernel fast = FastKernel::kNone;
};

// Arithmetic with the operand that leaves the other as it is (x + 0, x · 1, x − 0, x / 1).
struct Arithmetic {
  std::string_view op;
  ValueRule value;
  FastKernel fast = FastKernel::kNone;
  double identity_operand = kNoIdentityOperand;
};

using K = FastKernel;

std::vector<OpRecord> make_table() {
  std::vector<OpRecord> t;
  // Elementwise, one operand.
  for (std::string_view op : {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Celu", "Cos", "Cosh", "Gelu", "Mish",
                              "Round", "Selu", "Shrink", "Sin", "Sinh", "Softsign", "Tan", "ThresholdedRelu"})
    t.push_back(shaped(unary(op), s::same));
  // The fast executor runs these as one oneDNN eltwise each, or (no oneDNN algorithm: Erf,
  // Log, ...) as its own loop of the reference's element function.
  for (std::string_view op : {"Ceil", "Elu", "Erf", "Exp", "Floor", "Log", "Reciprocal", "Softplus", "Sqrt", "Tanh"})
    t.push_back(fast(shaped(unary(op), s::same), K::kActivation));
  for (std::string_view op : {"HardSwish", "LeakyRelu"})
    t.push_back(integer(fast(shaped(unary(op), s::same), K::kActivation), kFastRequantizing));
  // Activations a Conv may compute as its post-op; Relu and Clip are idempotent.
  auto post_op = [](bool idempotent) {
    return [idempotent](OpRecord& r) {
      r.conv_post_op = true;
      r.idempotent = idempotent;
    };
  };
  t.push_back(integer(fast(shaped(with(unary("Relu"), post_op(true)), s::same), K::kActivation), kFastRequantizing));
  t.push_back(
      integer(fast(shaped(with(unary("Sigmoid"), post_op(false)), s::same), K::kActivation), kFastRequantizing));
  t.push_back(
      integer(fast(shaped(with(unary("HardSigmoid"), post_op(false)), s::same), K::kActivation), kFastRequantizing));
  // Evaluated on integer constants too (shape computations).
  for (auto [op, value, kernel] : std::initializer_list<Valued>{{"Abs", s::value_abs, K::kActivation},
                                                                {"Neg", s::value_neg, K::kActivation},
                                                                {"Not", s::value_not},
                                                                {"Sign", s::value_sign}})
    t.push_back(fast(shaped(unary(op), s::same, value), kernel));
  for (std::string_view op : {"IsInf", "IsNaN"}) t.push_back(shaped(unary(op), s::to_bool));
  // Clip's min and max come as inputs 1 and 2 (real numbers, also over integers).
  t.push_back(integer(fast(shaped(with(unary("Clip"), post_op(true)), s::same), K::kActivation), kFastRequantizing));
  t.push_back(
      shaped(with(unary("Cast"), [](OpRecord& r) { r.in_place = InPlaceRule::kNone; }), s::cast, s::value_cast));
  t.push_back(shaped(with(unary("CastLike"), [](OpRecord& r) { r.in_place = InPlaceRule::kNone; }), s::cast_like));
  t.push_back(integer(fast(shaped(with(unary("Identity"), [](OpRecord& r) { r.in_place = InPlaceRule::kAlias; }),
                                  s::same, s::value_identity),
                           K::kCopy),
                      kSameQuant));
  t.push_back(fast(shaped(with(unary("Dropout"), [](OpRecord& r) { r.in_place = InPlaceRule::kAlias; }), s::dropout),
                   K::kCopy));
  // Not element by element along the axes they run over: no patch rule.
  auto whole_axis = [](OpRecord& r) {
    r.tile = T::kGeneric;
    r.patch = PatchRule::kNone;
  };
  for (std::string_view op : {"Softmax", "LogSoftmax"})
    t.push_back(fast(shaped(with(unary(op), whole_axis), s::softmax), K::kSoftmax));
  t.push_back(shaped(with(unary("Hardmax"), whole_axis), s::softmax));
  t.push_back(shaped(with(unary("LayerNormalization"), whole_axis), s::layer_norm));
  for (std::string_view op : {"CumSum", "ReverseSequence", "LpNormalization"})
    t.push_back(shaped(with(unary(op),
                            [](OpRecord& r) {
                              r.tile = T::kGeneric;
                              r.in_place = InPlaceRule::kNone;
                              r.patch = PatchRule::kNone;
                            }),
                       s::same));

  // Elementwise over broadcast operands.
  for (auto [op, value, kernel, identity] : std::initializer_list<Arithmetic>{{"Add", s::value_add, K::kBinary, 0.0},
                                                                              {"Mul", s::value_mul, K::kBinary, 1.0}}) {
    t.push_back(integer(fast(shaped(commutative(broadcasting(op)), s::broadcast, value), kernel), kBinaryRequantizing));
    t.back().identity_operand = identity;
  }
  for (auto [op, value, kernel, identity] : std::initializer_list<Arithmetic>{
           {"Sub", s::value_sub, K::kBinary, 0.0}, {"Div", s::value_div, K::kBinary, 1.0}, {"Mod", s::value_mod}}) {
    t.push_back(fast(shaped(broadcasting(op), s::broadcast, value), kernel));
    t.back().identity_operand = identity;
  }
  for (std::string_view op : {"PRelu", "BitShift"}) t.push_back(shaped(broadcasting(op), s::broadcast));
  // Comparisons and logic: the symmetric ones, then the orderings.
  for (auto [op, value, kernel] : std::initializer_list<Valued>{
           {"Equal", s::value_equal}, {"And", s::value_and}, {"Or", s::value_or}, {"Xor", s::value_xor}})
    t.push_back(fast(shaped(commutative(broadcasting(op)), s::broadcast_bool, value), kernel));
  for (auto [op, value, kernel] : std::initializer_list<Valued>{{"Less", s::value_less},
                                                                {"Greater", s::value_greater},
                                                                {"LessOrEqual", s::value_less_or_equal},
                                                                {"GreaterOrEqual", s::value_greater_or_equal}})
    t.push_back(fast(shaped(broadcasting(op), s::broadcast_bool, value), kernel));
  // The fast set takes Pow by a constant scalar exponent as an activation of its base.
  t.push_back(fast(shaped(broadcasting("Pow", 1), s::broadcast), K::kActivation));
  t.push_back(shaped(broadcasting("Where", 0, 3), s::where, s::value_where));
  for (auto [op, value, kernel] :
       std::initializer_list<Valued>{{"Max", s::value_max, K::kBinary}, {"Min", s::value_min, K::kBinary}})
    t.push_back(fast(shaped(with(commutative(broadcasting(op)), [](OpRecord& r) { r.contract = variadic_contract; }),
                            s::broadcast, value),
                     kernel));
  for (std::string_view op : {"Sum", "Mean"})
    t.push_back(
        shaped(with(commutative(broadcasting(op)), [](OpRecord& r) { r.contract = variadic_contract; }), s::broadcast));
  // Element by element, so patch by patch: the leading QuantizeLinear of an int8 model
  // opens its patched stage. A per-axis scale is 1-D: the patch rules read it as varying
  // over W and keep such a node out of a stage; per-tensor scalars broadcast.
  auto quantize = [](OpRecord& r) {
    r.roles = R::kQuantize;
    r.in_place = InPlaceRule::kNone;
    r.patch = PatchRule::kPointwise;
  };
  // The fast set quantizes per tensor in its own loop (its output is integer, its input float).
  t.push_back(fast(
      shaped(with(with(unary("QuantizeLinear"), quantize), [](OpRecord& r) { r.integer.fast = true; }), s::quantize),
      K::kQuantize));
  t.push_back(shaped(with(unary("DequantizeLinear"), quantize), s::dequantize));
  t.push_back(OpRecord{.domain = kMemledgerDomain,
                       .name = kAffineOp,
                       .shape = s::broadcast,
                       .roles = R::kElementwise,
                       .broadcasts = true,
                       .contract = affine_contract,
                       .tile = T::kElementwise,
                       .patch = PatchRule::kPointwise});
  t.push_back(OpRecord{.domain = kMemledgerDomain,
                       .name = kWritePatchOp,
                       .shape = s::same,
                       .roles = R::kSameAxes,
                       .contract = write_patch_contract});
  t.push_back(shaped(with(unary(kSelfGatedOp), [](OpRecord& r) { r.domain = kMemledgerDomain; }), s::same));
  t.push_back(OpRecord{.domain = kMemledgerDomain,
                       .name = kAccumulatePoolOp,
                       .shape = accumulate_pool_shape,
                       .roles = R::kReduction,
                       .data_inputs = 1,
                       .tile = T::kGlobalPool});

  // Channel-first: windows, normalizations, rearrangements of N, C, spatial.
  // Integer form: int8 data and per-channel int8 weights, an int32 bias (QLinearConv's math).
  t.push_back(fast(shaped(with(channel_first("Conv", 2),
                               [](OpRecord& r) {
                                 r.window = WindowKind::kConv;
                                 r.weight_input = 1;
                                 r.contract = conv_contract;
                                 r.tile = T::kConv;
                                 r.patch = PatchRule::kWindow;
                                 r.macs = conv_macs;
                                 r.integer = {.form = IntegerForm::kRequantizes,
                                              .quantized_inputs = 2,
                                              .weight_input = 1,
                                              .bias_input = 2,
                                              .fast = true};
                               }),
                          s::conv),
                   K::kConv));
  t.push_back(fast(shaped(with(channel_first("ConvTranspose", 2),
                               [](OpRecord& r) {
                                 r.window = WindowKind::kConv;
                                 r.weight_input = 1;
                                 r.weights_transposed = true;
                                 r.macs = conv_transpose_macs;
                               }),
                          s::conv_transpose),
                   K::kConvTranspose));
  auto conv_window = [](OpRecord& r) {
    r.window = WindowKind::kConv;
    r.weight_input = 1;
  };
  // Integer Convs written out: the importer reads them as Conv over quantized values.
  t.push_back(shaped(with(channel_first("ConvInteger"),
                          [&](OpRecord& r) {
                            conv_window(r);
                            r.qlinear = {.of = "Conv", .operands = QLinearOperands::kZeroPoints};
                          }),
                     s::conv_integer));
  // DeformConv (opset 19) is beyond the opsets memledger reads: no shape rule.
  t.push_back(with(channel_first("DeformConv"), conv_window));
  t.push_back(shaped(with(channel_first("QLinearConv"),
                          [](OpRecord& r) {
                            r.window = WindowKind::kConv;
                            r.weight_input = 3;
                            r.qlinear = {.of = "Conv", .operands = QLinearOperands::kTriples};
                          }),
                     s::qlinear_conv));
  auto pool = [](OpRecord& r) {
    r.window = WindowKind::kPool;
    r.tile = T::kPool;
    r.patch = PatchRule::kWindow;
  };
  // The fast set takes an integer MaxPool (oneDNN's s8/u8 max pooling); AveragePool stays.
  t.push_back(integer(fast(shaped(with(channel_first("MaxPool"), pool), s::pool), K::kPool), kFastRequantizing));
  t.push_back(integer(fast(shaped(with(channel_first("AveragePool"), pool), s::pool), K::kPool), kRequantizing));
  t.push_back(shaped(with(channel_first("LpPool"), pool), s::pool));
  t.push_back(
      shaped(with(channel_first("MaxRoiPool"), [](OpRecord& r) { r.window = WindowKind::kPool; }), s::max_roi_pool));
  t.push_back(fast(shaped(with(channel_first("GlobalAveragePool"),
                               [](OpRecord& r) {
                                 r.tile = T::kGlobalPool;
                                 r.patch = PatchRule::kGlobalPool;
                                 r.integer = kFastRequantizing;
                               }),
                          s::global_pool),
                   K::kGlobalPool));
  t.push_back(
      fast(shaped(with(channel_first("GlobalMaxPool"), [](OpRecord& r) { r.tile = T::kGlobalPool; }), s::global_pool),
           K::kGlobalPool));
  t.push_back(fast(shaped(with(channel_first("BatchNormalization", 1),
                               [](OpRecord& r) {
                                 r.in_place = InPlaceRule::kElementwise;
                                 r.tile = T::kElementwise;
                                 r.patch = PatchRule::kPointwise;
                               }),
                          s::batch_norm),
                   K::kBatchNorm));
  t.push_back(shaped(channel_first("InstanceNormalization", 1), s::same));
  for (std::string_view op : {"LRN", "MeanVarianceNormalization"}) t.push_back(shaped(channel_first(op), s::same));
  t.push_back(shaped(channel_first("GlobalLpPool"), s::global_pool));
  t.push_back(shaped(channel_first("MaxUnpool"), s::max_unpool));
  t.push_back(shaped(channel_first("DepthToSpace"), s::depth_to_space));
  t.push_back(shaped(channel_first("SpaceToDepth"), s::space_to_depth));
  t.push_back(shaped(channel_first("RoiAlign"), s::roi_align));

  // Same axes, other extents.
  t.push_back(fast(shaped(with(same_axes("Concat", -1),
                               [](OpRecord& r) {
                                 r.patch = PatchRule::kConcat;
                                 // fast: blocks copied, an input that requantizes through its table
                                 r.integer = {.form = IntegerForm::kRequantizes, .quantized_inputs = -1, .fast = true};
                               }),
                          s::concat, s::value_concat),
                   K::kConcat));
  t.push_back(integer(
      fast(shaped(with(same_axes("Slice"), [](OpRecord& r) { r.patch = PatchRule::kSlice; }), s::slice, s::value_slice),
           K::kSlice),
      kSameQuant));
  t.push_back(shaped(same_axes("Pad"), s::pad));
  t.push_back(integer(shaped(same_axes("Resize"), s::resize), kRequantizing));
  t.push_back(shaped(same_axes("Upsample"), s::upsample));
  t.push_back(shaped(same_axes("Split"), s::split));
  t.push_back(shaped(same_axes("Tile"), s::tile));
  t.push_back(shaped(same_axes("TopK"), s::top_k));
  t.push_back(
      shaped(OpRecord{.name = "Expand", .roles = R::kBroadcastTo, .data_inputs = 1}, s::expand, s::value_expand));
  t.push_back(
      integer(fast(shaped(OpRecord{.name = "Transpose", .roles = R::kTranspose}, s::transpose, s::value_transpose),
                   K::kTranspose),
              kSameQuant));

  // Reductions.
  for (std::string_view op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    t.push_back(shaped(reduction(op), s::reduce));
  for (auto [op, value, kernel] : std::initializer_list<Valued>{{"ReduceMax", s::value_reduce_max},
                                                                {"ReduceMin", s::value_reduce_min},
                                                                {"ReduceProd", s::value_reduce_prod}})
    t.push_back(fast(shaped(reduction(op), s::reduce, value), kernel));
  t.push_back(shaped(reduction("ReduceSum"), s::reduce_sum, s::value_reduce_sum));
  for (std::string_view op : {"ArgMax", "ArgMin"}) t.push_back(shaped(reduction(op), s::arg_reduce));
  t.push_back(
      integer(fast(shaped(with(reduction("ReduceMean"), [](OpRecord& r) { r.tile = T::kGlobalPool; }), s::reduce),
                   K::kReduceMean),
              kFastRequantizing));

  // Losses (inference math): a reduced loss, or one per element when reduction is none.
  t.push_back(shaped(plain("NegativeLogLikelihoodLoss"), s::nll_loss));
  t.push_back(shaped(plain("SoftmaxCrossEntropyLoss"), s::softmax_cross_entropy));

  // Reshape-like.
  t.push_back(integer(fast(shaped(alias("Reshape"), s::reshape, s::value_reshape), K::kCopy), kSameQuant));
  t.push_back(integer(fast(shaped(alias("Flatten"), s::flatten), K::kCopy), kSameQuant));
  t.push_back(integer(fast(shaped(alias("Squeeze"), s::squeeze, s::value_squeeze), K::kCopy), kSameQuant));
  t.push_back(integer(fast(shaped(alias("Unsqueeze"), s::unsqueeze, s::value_squeeze), K::kCopy), kSameQuant));

  // Matrix products.
  // Integer forms: int8 data, int8 weights (per output column), Gemm's C an int32 bias.
  t.push_back(integer(fast(shaped(OpRecord{.name = "Gemm", .tile = T::kGemm, .macs = gemm_macs}, s::gemm), K::kGemm),
                      {.form = IntegerForm::kRequantizes,
                       .quantized_inputs = 2,
                       .weight_input = 1,
                       .bias_input = 2,
                       .weight_channel_axis = -1,
                       .transposed_by = "transB",
                       .fast = true}));
  t.push_back(integer(
      fast(shaped(OpRecord{.name = "MatMul", .tile = T::kMatMul, .macs = matmul_macs}, s::matmul), K::kMatMul),
      {.form = IntegerForm::kRequantizes, .quantized_inputs = 2, .weight_input = 1, .weight_channel_axis = -1}));
  t.push_back(shaped(with(plain("MatMulInteger"),
                          [](OpRecord& r) { r.qlinear = {.of = "MatMul", .operands = QLinearOperands::kZeroPoints}; }),
                     s::matmul_integer));
  t.push_back(shaped(with(plain("QLinearMatMul"),
                          [](OpRecord& r) { r.qlinear = {.of = "MatMul", .operands = QLinearOperands::kTriples}; }),
                     s::qlinear_matmul));
  t.push_back(shaped(plain("Einsum"), s::einsum));

  // Data movement and shape computation.
  t.push_back(shaped(plain("Gather"), s::gather, s::value_gather));
  t.push_back(shaped(plain("GatherElements"), s::gather_elements));
  t.push_back(shaped(plain("GatherND"), s::gather_nd));
  for (std::string_view op : {"ScatterElements", "ScatterND", "Scatter", "Trilu"})
    t.push_back(shaped(plain(op), s::same));
  t.push_back(shaped(plain("Shape"), s::shape_of, s::value_shape));
  t.push_back(shaped(plain("Size"), s::size_of, s::value_size));
  // Constant's value is its output: the importer reads it directly.
  t.push_back(plain("Constant"));
  t.push_back(shaped(plain("ConstantOfShape"), s::constant_of_shape, s::value_constant_of_shape));
  t.push_back(shaped(plain("Range"), s::range, s::value_range));
  t.push_back(shaped(plain("NonZero"), s::non_zero));
  t.push_back(shaped(plain("OneHot"), s::one_hot));
  t.push_back(shaped(plain("EyeLike"), s::eye_like));
  t.push_back(shaped(plain("Compress"), s::compress));
  // Outputs whose extents depend on the data: libonnx's inference says what it can.
  for (std::string_view op : {"Unique", "NonMaxSuppression"}) t.push_back(plain(op));

  // TFLite's builtin operators (domain "tflite"), in TFLite's layout: ir/op_table_tflite.cpp.
  for (OpRecord& r : tflite_records()) t.push_back(r);
  return t;
}

struct Index {
  std::vector<OpRecord> records;
  std::map<std::pair<std::string_view, std::string_view>, std::vector<const OpRecord*>, std::less<>> by_name;
};

const Index& index() {
  static const Index idx = [] {
    Index i;
    i.records = make_table();
    for (const OpRecord& r : i.records) {
      auto& slot = i.by_name[{r.domain, r.name}];
      for (const OpRecord* other : slot)
        ML_CHECK(other->since_version != r.since_version, "op table: {} recorded twice", r.name);
      slot.push_back(&r);
    }
    for (auto& [key, slot] : i.by_name)
      std::sort(slot.begin(), slot.end(),
                [](const OpRecord* a, const OpRecord* b) { return a->since_version < b->since_version; });
    return i;
  }();
  return idx;
}

std::string_view default_domain(std::string_view domain) { return domain == "ai.onnx" ? std::string_view{} : domain; }

}  // namespace

std::span<const OpRecord> op_table() { return index().records; }

const OpRecord* find_op(std::string_view domain, std::string_view name, int64_t opset) {
  const auto& by_name = index().by_name;
  const auto it = by_name.find(std::pair{default_domain(domain), name});
  if (it == by_name.end()) return nullptr;
  const OpRecord* found = nullptr;
  for (const OpRecord* r : it->second)
    if (r->since_version <= opset || !found) found = r;
  return found;
}

const OpRecord* find_op(const Node& node, int64_t opset) { return find_op(node.domain, node.op, opset); }

bool broadcasts(const Node& node) {
  const OpRecord* r = find_op(node);
  return r && r->broadcasts;
}

std::string op_name(const Node& node) {
  const std::string_view domain = default_domain(node.domain);
  return domain.empty() ? node.op : std::string(domain) + "." + node.op;
}

bool op_is_known(const Node& node, const DeviceProfile& profile) {
  return find_op(node) != nullptr || profile.ops.count(op_name(node)) != 0;
}

KernelContract op_contract(const Graph& g, NodeId id, const DeviceProfile& profile) {
  const Node& node = g.node(id);
  if (const OpRecord* r = find_op(node, g.opset)) {
    if (r->contract) return r->contract(g, node, profile);
    KernelContract contract;
    switch (r->in_place) {
      case InPlaceRule::kNone:
        break;
      case InPlaceRule::kElementwise:
        contract = elementwise_contract(g, node, static_cast<size_t>(r->in_place_inputs));
        break;
      case InPlaceRule::kAlias:
        contract = alias_contract(g, node, profile);
        break;
    }
    if (r->workspace) contract.workspace_bytes = r->workspace(g, node, profile);
    return contract;
  }
  const auto declared = profile.ops.find(op_name(node));
  if (declared == profile.ops.end())
    fail("node {}: operator {} is not in the op table; a device profile may declare its rules in [ops.{}]",
         node.label(), op_name(node), op_name(node));
  const DeclaredOp& op = declared->second;
  KernelContract contract;
  if (op.in_place_input >= 0 && static_cast<size_t>(op.in_place_input) < node.inputs.size() &&
      node.inputs[static_cast<size_t>(op.in_place_input)].valid() && !node.outputs.empty())
    contract.overwritable_inputs.push_back(op.in_place_input);
  contract.workspace_bytes = op.workspace_bytes;
  if (op.workspace_output_multiple > 0 && !node.outputs.empty() && node.outputs[0].valid()) {
    const Value& out = g.value(node.outputs[0]);
    const int64_t out_bytes = tensor_layout(profile, out.shape, out.dtype, out.roles).bytes();
    contract.workspace_bytes = checked_add(
        contract.workspace_bytes, checked_mul(out_bytes, op.workspace_output_multiple, "workspace"), "workspace");
  }
  return contract;
}

}  // namespace memledger
