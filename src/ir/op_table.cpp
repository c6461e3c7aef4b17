// The op table's records. Adding an operator is one record here (plus, to run it, one
// kernel in exec/); nothing else in the code keeps a list of operator names.
#include "memledger/ir/op_table.h"

#include <algorithm>
#include <map>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/device/tensor_layout.h"
#include "memledger/ir/affine.h"
#include "memledger/ir/window.h"

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
// (one channel per group) Conv.
int64_t conv_workspace(const Graph& g, const Node& node, const DeviceProfile& profile) {
  const ConvShape s = conv_shape(g, node);
  if (s.w.is_pointwise() || s.direct()) return 0;
  const int64_t k = s.cg * s.w.k_size();
  return tensor_layout(profile, {k, im2col_block_rows(s.w, k) * s.w.out[2]}, DType::kFloat32, {}).bytes();
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
          .tile = T::kElementwise};
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
          .tile = T::kElementwise};
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

std::vector<OpRecord> make_table() {
  std::vector<OpRecord> t;
  // Elementwise, one operand.
  for (std::string_view op :
       {"Abs",         "Acos",       "Acosh",    "Asin",     "Asinh",     "Atan",   "Atanh",   "Ceil",
        "Celu",        "Cos",        "Cosh",     "Elu",      "Erf",       "Exp",    "Floor",   "Gelu",
        "HardSigmoid", "HardSwish",  "IsInf",    "IsNaN",    "LeakyRelu", "Log",    "Mish",    "Neg",
        "Not",         "Reciprocal", "Relu",     "Round",    "Selu",      "Shrink", "Sigmoid", "Sign",
        "Sin",         "Sinh",       "Softplus", "Softsign", "Sqrt",      "Tan",    "Tanh",    "ThresholdedRelu"})
    t.push_back(unary(op));
  t.push_back(unary("Clip"));  // min and max come as inputs 1 and 2
  t.push_back(with(unary("Cast"), [](OpRecord& r) { r.in_place = InPlaceRule::kNone; }));
  t.push_back(with(unary("CastLike"), [](OpRecord& r) { r.in_place = InPlaceRule::kNone; }));
  t.push_back(with(unary("Identity"), [](OpRecord& r) { r.in_place = InPlaceRule::kAlias; }));
  t.push_back(with(unary("Dropout"), [](OpRecord& r) { r.in_place = InPlaceRule::kAlias; }));
  for (std::string_view op : {"Softmax", "LogSoftmax", "Hardmax", "LayerNormalization"})
    t.push_back(with(unary(op), [](OpRecord& r) { r.tile = T::kGeneric; }));
  for (std::string_view op : {"CumSum", "ReverseSequence"})
    t.push_back(with(unary(op), [](OpRecord& r) {
      r.tile = T::kGeneric;
      r.in_place = InPlaceRule::kNone;
    }));

  // Elementwise over broadcast operands.
  for (std::string_view op : {"Add", "Sub", "Mul", "Div", "PRelu", "Mod", "BitShift", "Equal", "Less", "Greater",
                              "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"})
    t.push_back(broadcasting(op));
  t.push_back(broadcasting("Pow", 1));
  t.push_back(broadcasting("Where", 0, 3));
  for (std::string_view op : {"Max", "Min", "Sum", "Mean"})
    t.push_back(with(broadcasting(op), [](OpRecord& r) { r.contract = variadic_contract; }));
  for (std::string_view op : {"QuantizeLinear", "DequantizeLinear"})
    t.push_back(with(unary(op), [](OpRecord& r) {
      r.roles = R::kQuantize;
      r.in_place = InPlaceRule::kNone;
    }));
  t.push_back(OpRecord{.domain = kMemledgerDomain,
                       .name = kAffineOp,
                       .roles = R::kElementwise,
                       .broadcasts = true,
                       .contract = affine_contract,
                       .tile = T::kElementwise});

  // Channel-first: windows, normalizations, rearrangements of N, C, spatial.
  t.push_back(with(channel_first("Conv", 2), [](OpRecord& r) {
    r.window = WindowKind::kConv;
    r.weight_input = 1;
    r.workspace = conv_workspace;
    r.tile = T::kConv;
  }));
  t.push_back(with(channel_first("ConvTranspose", 2), [](OpRecord& r) {
    r.window = WindowKind::kConv;
    r.weight_input = 1;
    r.weights_transposed = true;
  }));
  for (std::string_view op : {"ConvInteger", "DeformConv"})
    t.push_back(with(channel_first(op), [](OpRecord& r) {
      r.window = WindowKind::kConv;
      r.weight_input = 1;
    }));
  t.push_back(with(channel_first("QLinearConv"), [](OpRecord& r) {
    r.window = WindowKind::kConv;
    r.weight_input = 3;
  }));
  for (std::string_view op : {"MaxPool", "AveragePool", "LpPool"})
    t.push_back(with(channel_first(op), [](OpRecord& r) {
      r.window = WindowKind::kPool;
      r.tile = T::kPool;
    }));
  t.push_back(with(channel_first("MaxRoiPool"), [](OpRecord& r) { r.window = WindowKind::kPool; }));
  for (std::string_view op : {"GlobalAveragePool", "GlobalMaxPool"})
    t.push_back(with(channel_first(op), [](OpRecord& r) { r.tile = T::kGlobalPool; }));
  t.push_back(with(channel_first("BatchNormalization", 1), [](OpRecord& r) {
    r.in_place = InPlaceRule::kElementwise;
    r.tile = T::kElementwise;
  }));
  t.push_back(channel_first("InstanceNormalization", 1));
  for (std::string_view op :
       {"GlobalLpPool", "MaxUnpool", "LRN", "MeanVarianceNormalization", "DepthToSpace", "SpaceToDepth", "RoiAlign"})
    t.push_back(channel_first(op));

  // Same axes, other extents.
  t.push_back(same_axes("Concat", -1));
  for (std::string_view op : {"Pad", "Resize", "Slice", "Split", "Tile", "Upsample", "TopK"})
    t.push_back(same_axes(op));
  t.push_back(OpRecord{.name = "Expand", .roles = R::kBroadcastTo, .data_inputs = 1});
  t.push_back(OpRecord{.name = "Transpose", .roles = R::kTranspose});

  // Reductions.
  for (std::string_view op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMin",
                              "ReduceProd", "ReduceSum", "ReduceSumSquare", "ArgMax", "ArgMin"})
    t.push_back(reduction(op));
  t.push_back(with(reduction("ReduceMean"), [](OpRecord& r) { r.tile = T::kGlobalPool; }));

  // Reshape-like.
  for (std::string_view op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) t.push_back(alias(op));

  // Matrix products.
  t.push_back(OpRecord{.name = "Gemm", .tile = T::kGemm});
  t.push_back(OpRecord{.name = "MatMul", .tile = T::kMatMul});
  for (std::string_view op : {"MatMulInteger", "QLinearMatMul", "Einsum"}) t.push_back(plain(op));

  // Data movement and shape computation.
  for (std::string_view op :
       {"Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Shape", "Size", "Constant",
        "ConstantOfShape", "Range", "NonZero", "OneHot", "Trilu", "EyeLike", "Compress", "Unique", "NonMaxSuppression"})
    t.push_back(plain(op));
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
