// The shape rules the op table's records point at, one per family of operators, and the
// value rules that evaluate shape computations on small integer constants. Private to ir/:
// everything else reads them through the records (ir/op_table.h).
#pragma once

#include "memledger/ir/shape_rule.h"

namespace memledger::shape_rules {

// Elementwise, one operand: the output is input 0's type (Relu, Softmax, Clip, Trilu ...).
std::vector<TensorType> same(const ShapeInputs&);
// As `same`, with another element type: bool (IsNaN, IsInf), `to` (Cast), input 1's
// (CastLike), the zero point's (QuantizeLinear), float (DequantizeLinear).
std::vector<TensorType> to_bool(const ShapeInputs&);
std::vector<TensorType> cast(const ShapeInputs&);
std::vector<TensorType> cast_like(const ShapeInputs&);
std::vector<TensorType> quantize(const ShapeInputs&);
std::vector<TensorType> dequantize(const ShapeInputs&);
// Softmax family: input 0's type, `axis` checked against the rank.
std::vector<TensorType> softmax(const ShapeInputs&);
// Dropout: the data, and a bool mask of its shape.
std::vector<TensorType> dropout(const ShapeInputs&);
// Normalizations: input 0's type; BatchNormalization's and LayerNormalization's extra
// outputs (running or saved statistics, mean and inverse deviation).
std::vector<TensorType> batch_norm(const ShapeInputs&);
std::vector<TensorType> layer_norm(const ShapeInputs&);
std::vector<TensorType> eye_like(const ShapeInputs&);

// Broadcasting elementwise: the operands broadcast numpy-style; input 0's type, bool for
// comparisons, input 1's for Where.
std::vector<TensorType> broadcast(const ShapeInputs&);
std::vector<TensorType> broadcast_bool(const ShapeInputs&);
std::vector<TensorType> where(const ShapeInputs&);

// Reductions over `axes` (attribute, or input 1 from opset 13 for ReduceSum), and ArgMax/Min.
std::vector<TensorType> reduce(const ShapeInputs&);
std::vector<TensorType> reduce_sum(const ShapeInputs&);  // axes from input 1 from opset 13
std::vector<TensorType> arg_reduce(const ShapeInputs&);

// Windows: Conv (and ConvInteger, QLinearConv), pools, ConvTranspose, global pools, ROI pools.
std::vector<TensorType> conv(const ShapeInputs&);
std::vector<TensorType> conv_integer(const ShapeInputs&);
std::vector<TensorType> qlinear_conv(const ShapeInputs&);
std::vector<TensorType> pool(const ShapeInputs&);
std::vector<TensorType> conv_transpose(const ShapeInputs&);
std::vector<TensorType> global_pool(const ShapeInputs&);
std::vector<TensorType> max_roi_pool(const ShapeInputs&);
std::vector<TensorType> roi_align(const ShapeInputs&);
std::vector<TensorType> max_unpool(const ShapeInputs&);
std::vector<TensorType> depth_to_space(const ShapeInputs&);
std::vector<TensorType> space_to_depth(const ShapeInputs&);

// Matrix products.
std::vector<TensorType> matmul(const ShapeInputs&);
std::vector<TensorType> matmul_integer(const ShapeInputs&);
std::vector<TensorType> qlinear_matmul(const ShapeInputs&);
std::vector<TensorType> gemm(const ShapeInputs&);
std::vector<TensorType> einsum(const ShapeInputs&);

// Reshape family.
std::vector<TensorType> reshape(const ShapeInputs&);
std::vector<TensorType> flatten(const ShapeInputs&);
std::vector<TensorType> squeeze(const ShapeInputs&);
std::vector<TensorType> unsqueeze(const ShapeInputs&);

// Concat and Split.
std::vector<TensorType> concat(const ShapeInputs&);
std::vector<TensorType> split(const ShapeInputs&);

// Slice and gather family.
std::vector<TensorType> slice(const ShapeInputs&);
std::vector<TensorType> gather(const ShapeInputs&);
std::vector<TensorType> gather_elements(const ShapeInputs&);
std::vector<TensorType> gather_nd(const ShapeInputs&);
std::vector<TensorType> compress(const ShapeInputs&);
std::vector<TensorType> one_hot(const ShapeInputs&);
std::vector<TensorType> top_k(const ShapeInputs&);
std::vector<TensorType> transpose(const ShapeInputs&);

// Pad, Resize, Upsample, Tile, Expand.
std::vector<TensorType> pad(const ShapeInputs&);
std::vector<TensorType> resize(const ShapeInputs&);
std::vector<TensorType> upsample(const ShapeInputs&);
std::vector<TensorType> tile(const ShapeInputs&);
std::vector<TensorType> expand(const ShapeInputs&);

// Generators and shape queries.
std::vector<TensorType> shape_of(const ShapeInputs&);
std::vector<TensorType> size_of(const ShapeInputs&);
std::vector<TensorType> constant_of_shape(const ShapeInputs&);
std::vector<TensorType> range(const ShapeInputs&);
std::vector<TensorType> non_zero(const ShapeInputs&);

// Losses.
std::vector<TensorType> nll_loss(const ShapeInputs&);
std::vector<TensorType> softmax_cross_entropy(const ShapeInputs&);

// ---- value rules (shape_values.cpp): small integer constants evaluated ----
std::optional<Tensor> value_shape(const ShapeInputs&);
std::optional<Tensor> value_size(const ShapeInputs&);
std::optional<Tensor> value_identity(const ShapeInputs&);
std::optional<Tensor> value_cast(const ShapeInputs&);
std::optional<Tensor> value_add(const ShapeInputs&);
std::optional<Tensor> value_sub(const ShapeInputs&);
std::optional<Tensor> value_mul(const ShapeInputs&);
std::optional<Tensor> value_div(const ShapeInputs&);
std::optional<Tensor> value_mod(const ShapeInputs&);
std::optional<Tensor> value_min(const ShapeInputs&);
std::optional<Tensor> value_max(const ShapeInputs&);
std::optional<Tensor> value_equal(const ShapeInputs&);
std::optional<Tensor> value_less(const ShapeInputs&);
std::optional<Tensor> value_greater(const ShapeInputs&);
std::optional<Tensor> value_less_or_equal(const ShapeInputs&);
std::optional<Tensor> value_greater_or_equal(const ShapeInputs&);
std::optional<Tensor> value_and(const ShapeInputs&);
std::optional<Tensor> value_or(const ShapeInputs&);
std::optional<Tensor> value_xor(const ShapeInputs&);
std::optional<Tensor> value_not(const ShapeInputs&);
std::optional<Tensor> value_neg(const ShapeInputs&);
std::optional<Tensor> value_abs(const ShapeInputs&);
std::optional<Tensor> value_sign(const ShapeInputs&);
std::optional<Tensor> value_where(const ShapeInputs&);
std::optional<Tensor> value_constant_of_shape(const ShapeInputs&);
std::optional<Tensor> value_expand(const ShapeInputs&);
std::optional<Tensor> value_reshape(const ShapeInputs&);
std::optional<Tensor> value_range(const ShapeInputs&);
std::optional<Tensor> value_reduce_prod(const ShapeInputs&);
std::optional<Tensor> value_reduce_sum(const ShapeInputs&);
std::optional<Tensor> value_reduce_max(const ShapeInputs&);
std::optional<Tensor> value_reduce_min(const ShapeInputs&);
std::optional<Tensor> value_gather(const ShapeInputs&);
std::optional<Tensor> value_squeeze(const ShapeInputs&);
std::optional<Tensor> value_concat(const ShapeInputs&);
std::optional<Tensor> value_slice(const ShapeInputs&);
std::optional<Tensor> value_transpose(const ShapeInputs&);

}  // namespace memledger::shape_rules
