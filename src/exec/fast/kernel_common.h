// What the fast kernel families (exec/fast/kernels_<family>.cpp) share: the oneDNN set-up
// (descriptors of the node's values, which implementations are usable), the refusal that
// sends a node to the reference kernels, and each family's prepare functions, which
// prepare.cpp dispatches to by the op table's FastKernel family. Internal to exec/fast.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exec/fast/dnnl_node.h"
#include "exec/requantize.h"
#include "memledger/ir/op_table.h"

namespace memledger::exec::fast {

using dnnl::algorithm;
using dnnl::memory;
using dt = dnnl::memory::data_type;
using Args = std::vector<std::pair<int, memory>>;

// Thrown inside preparation when the fast set does not take this node.
struct NotFast {
  std::string why;
};

[[noreturn]] inline void not_fast(std::string why) { throw NotFast{std::move(why)}; }

// The family the op table names for `n`'s operator (at the graph's opset) that the fast set runs it with.
FastKernel fast_kernel(const Graph& g, const Node& n);

// The node's values (a missing input is refused) and their float dims.
const Value& in_value(const Graph& g, const Node& n, size_t i);
const Value& out_value(const Graph& g, const Node& n);
bool has_in(const Node& n, size_t i);
void require_f32(const Value& v);
memory::dims all_f32_dims(const Value& v);
bool has_empty_tensor(const Graph& g, const Node& n);
// Constant inputs: a float scalar (`fallback` where the input is absent), an integer list.
float constant_scalar(const Graph& g, const Node& n, size_t i, float fallback);
std::vector<int64_t> constant_ints(const Graph& g, const Node& n, size_t i);
// Attribute `axis` of a rank-`rank` tensor, counted from 0.
int64_t node_axis(const Node& n, int64_t fallback, int64_t rank);

// A primitive descriptor whose implementation is neither gemm-based (it allocates packing
// buffers itself) nor a reference loop (slower than exec's own kernels).
template <typename PD>
PD usable(PD pd, bool allow_ref) {
  for (;;) {
    const std::string impl = pd.impl_info_str();
    const bool gemm = impl.rfind("gemm", 0) == 0;
    const bool ref = impl.rfind("ref", 0) == 0;
    if (!gemm && (allow_ref || !ref)) return pd;
    if (!pd.next_impl()) not_fast(fmt::format("oneDNN has only '{}' for it", impl));
  }
}

// Weights of dims `dims` stored at `strides` (elements), as a descriptor.
memory::desc strided_desc(const memory::dims& dims, const memory::dims& strides);
// Whether `d` is a plain strided descriptor (no blocks) starting at its buffer's first byte.
bool plain_strided(const memory::desc& d);
// Whether value `v` is held channels-last (fast/layout.h).
bool channels_last(const PrepareOptions& options, ValueId v);
// An activation's descriptor: NHWC where `cl` (a 4-d tensor), else row-major.
memory::desc act_desc(const memory::dims& dims, bool cl, dt type = dt::f32);

// The spatial window of a Conv, ConvTranspose or pool node: strides, dilations (ONNX
// convention, 1 = dense), pads at each end as oneDNN needs them for the node's shapes.
struct Window {
  memory::dims kernel, strides, dilations, pad_l, pad_r;
};
std::vector<int64_t> sized_attr(const Node& n, const char* key, int64_t fallback, size_t count);
// Forward windows (Conv, pools): pad_r is what makes oneDNN's output extent the node's
// (ceil_mode and pads beyond the last window included).
Window forward_window(const Node& n, const Shape& x, const Shape& y, const std::vector<int64_t>& kernel);
memory::dims dnnl_dilations(const memory::dims& onnx);

// Activations and their fusion (kernels_eltwise.cpp). An activation is one oneDNN eltwise
// over the flat buffer (same shape in and out), then clipped to [0, 1] where `clip_to_unit`
// (HardSigmoid: alpha·x + beta, then the clip; oneDNN 2.6 has no hard sigmoid of its own).
struct Activation {
  algorithm alg;
  float alpha = 0, beta = 0;
  bool clip_to_unit = false;
};
Activation activation_of(const Graph& g, const Node& n);
// The operators kernels_eltwise.cpp's tables give an activation or a binary algorithm, for
// the check that each is one the op table marks FastKernel::kActivation or kBinary
// (tests/exec/fast_layout_test.cpp: an entry the op table does not send here is dead).
std::vector<std::string_view> activation_table_ops();
std::vector<std::string_view> binary_table_ops();
// The activation's oneDNN post-ops (appended to `ops`).
void append_activation(dnnl::post_ops& ops, const Activation& a);
// The product x·gate(x) of a self-gated activation (ir/self_gated.h) as one oneDNN
// algorithm, or none.
std::optional<Activation> gated_product(const Node& gate);
// The input x of `mul` (0 or 1) when `mul` is a self-gated activation's Mul, x·gate(x), whose
// gate only that Mul reads; else -1.
int gated_input(const Graph& g, const Node& mul);
// The self-gated activation's Mul that `gate` gates (and that computes it), or null.
const Node* gated_mul_of(const Graph& g, const Node& gate);

// The activation a Conv's output goes through, that can be its post-op: one the op table
// marks conv_post_op (Relu, Clip, Sigmoid, HardSigmoid) that alone reads the output (same
// shape, float, not a graph output), or a self-gated activation's Mul (SiLU, hard-swish) whose
// gate and itself are the output's only readers. Null when there is none. (A
// squeeze-and-excitation block's gate is a Conv on a 1×1 activation and its Sigmoid.)
struct PostOp {
  const Node* node = nullptr;  // the activation or Mul whose output the post-op computes
  Activation activation;
};
PostOp fusable_activation(const Graph& g, const Node& conv);
// The input of `node` (an activation or a self-gated activation's Mul) that a Conv's output
// with `node` as its post-op is, or -1.
int forwarded_input(const Graph& g, const Node& node);
// The Conv whose post-op `node` is, or null.
const Node* fused_conv_of(const Graph& g, const Node& node);
// A node whose work the Conv before it did: it forwards input `input` (the Conv's output).
std::unique_ptr<PreparedNode> forward_node(const Graph& g, const Node& n, int input);
// A gate whose work its self-gated activation's Mul does: nothing to run.
std::unique_ptr<PreparedNode> skipped_node();
// A node of an erf GELU (ir/erf_gelu.h) whose work its inner Mul does: nothing to run for the
// Div, the Erf and the Add, the inner Mul's output forwarded by the last Mul (by ½). Null for
// the inner Mul itself and for a node of no GELU.
std::unique_ptr<PreparedNode> erf_gelu_part(const Graph& g, const Node& n);
// The inner Mul of an erf GELU as the whole GELU of x (oneDNN's erf GELU, fused()), when `mul`
// is one and oneDNN has a fast GELU; else false, nothing prepared.
bool prepare_erf_gelu(DnnlNode& node, const Graph& g, const Node& mul);

// A Conv-like primitive (`pd`) between the node's plain buffers: its input reordered into
// the workspace where the primitive wants another format, constant weights prepacked (or
// reordered on every run), its output through the workspace where needed (kernels_conv.cpp).
void run_through_workspace(DnnlNode& node, const dnnl::primitive& primitive, const dnnl::primitive_desc_base& pd,
                           const memory& src, const memory& weights, const Value& weights_value, const memory& bias,
                           const memory& dst, const std::string& what, const PrepareOptions& options);

// Each family's prepare functions: the node's primitives and bindings into `node`, or
// NotFast (or a dnnl::error) when the fast set does not take it.
void prepare_conv(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
// An integer Conv (ir/integer_node.h) as oneDNN's int8 convolution, an integer Gemm as its
// one-wide convolution over the rows (kernels_integer_conv.cpp).
void prepare_integer_conv(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
// An integer Conv's extents as both fast integer Convs check them (NotFast where oneDNN's
// convolution cannot take them): its window, groups, and weights as [M, C/g, k...] or, grouped,
// [g, M/g, C/g, k...].
struct IntegerConvGeometry {
  memory::dims x, y, weights;
  int64_t group = 1, maps = 0, group_channels = 0;
  Window window;
};
IntegerConvGeometry integer_conv_geometry(const Graph& g, const Node& n);
// An integer Gemm's extents, y[M, N] = A[M, K]·B (B [N, K] with transB), as both fast forms
// take it: 2-D operands, no transA, C (if any) a row of N biases; else not_fast.
struct IntegerGemmShape {
  int64_t M = 0, N = 0, K = 0;
  bool trans_b = false;
};
IntegerGemmShape integer_gemm_shape(const Graph& g, const Node& n);
void prepare_integer_gemm(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
// An integer Conv as oneDNN's f32 convolution over the codes, exact, with the reference's
// requantization (kernels_integer_conv_f32.cpp): where int8 dot products or the rule rule out the int8 one.
void prepare_integer_conv_f32(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
// The integer Gemm the same way, a 1×1 convolution over A's rows.
void prepare_integer_gemm_f32(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
// What that exact convolution needs of its node, as each model source reads it: the ONNX Conv
// (NCHW, weights [M, C/g, k...]) and TFLite's CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
// (NHWC, filters OHWI and 1HWO, kernels_tflite_conv.cpp) fill it; prepare_exact_conv builds
// the node from it. Inputs 0, 1, 2 are the activation, the int8 weight constant, the int32 bias.
struct ExactConvSpec {
  memory::dims x, y;     // [N, C, spatial...]
  memory::desc weights;  // s8 over the weight constant's bytes: [M, C, k...] or grouped [g, M/g, C/g, k...]
  int64_t group = 1, maps = 0, group_channels = 0;
  Window window;
  std::vector<double> weight_abs;  // Σ|w| over the taps, by map · group_channels + group channel
  int32_t x_zero = 0;
  QuantRange x_range;
  Requantization rule = Requantization::kFloatScale;
  std::vector<double> multipliers;  // one, or one per map: s_x · s_w / s_y as the rule computes it
  int32_t y_zero = 0;
  QuantRange y_range;  // the output type's, or narrower (a fused activation's)
  bool src_cl = false, dst_cl = false, has_bias = false;
};
void prepare_exact_conv(DnnlNode& node, const Graph& g, const Node& n, const ExactConvSpec& spec,
                        const PrepareOptions& options);
// TFLite's int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED as that exact convolution.
void prepare_tflite_conv(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
// The integer Add and Mul, activation tables, self-gated pairs and GlobalAveragePool as the fast set's own
// loops, bit-identical to the reference kernels (kernels_integer_eltwise.cpp).
std::unique_ptr<PreparedNode> prepare_integer_binary(const Graph& g, const Node& n, const PrepareOptions& options);
std::unique_ptr<PreparedNode> prepare_integer_activation(const Graph& g, const Node& n);
// QuantizeLinear of float32 values per tensor (a constant scalar scale and zero point) to int8
// or uint8, the reference kernel's very codes.
std::unique_ptr<PreparedNode> prepare_quantize(const Graph& g, const Node& n);
// The Mul y = x·gate(x) of an 8-bit self-gated pair (input x = `x`) as one table over x's codes.
std::unique_ptr<PreparedNode> prepare_integer_gated(const Graph& g, const Node& mul, int x);
std::unique_ptr<PreparedNode> prepare_integer_global_pool(const Graph& g, const Node& n, const PrepareOptions& options);
void prepare_conv_transpose(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
void prepare_pool(DnnlNode& node, const Graph& g, const Node& n, bool max, bool global, const PrepareOptions& options);
// y = a·b (+ bias) over descriptors of the node's buffers (kernels_matmul.cpp).
void add_matmul(DnnlNode& node, const memory& a, const memory& b, const memory& bias, const memory& y,
                const dnnl::primitive_attr& attr, const Value* b_constant, const PrepareOptions& options);
void prepare_gemm(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
void prepare_matmul(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
void prepare_gated(DnnlNode& node, const Graph& g, const Node& mul, int x);
void prepare_activation(DnnlNode& node, const Graph& g, const Node& n);
void prepare_binary(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
void prepare_batch_norm(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options);
void prepare_softmax(DnnlNode& node, const Graph& g, const Node& n);
void prepare_reduce_mean(DnnlNode& node, const Graph& g, const Node& n);
std::unique_ptr<PreparedNode> prepare_concat(const Graph& g, const Node& n, const PrepareOptions& options);
void prepare_transpose(DnnlNode& node, const Graph& g, const Node& n);
void prepare_slice(DnnlNode& node, const Graph& g, const Node& n);
std::unique_ptr<PreparedNode> prepare_copy(const Graph& g, const Node& n);

}  // namespace memledger::exec::fast
