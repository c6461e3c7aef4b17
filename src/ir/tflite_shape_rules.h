// Shape rules of TFLite's builtin operators, in TFLite's own layout (activations NHWC,
// CONV_2D filters OHWI, DEPTHWISE_CONV_2D filters 1HWO, FULLY_CONNECTED weights [O, I]).
// A .tflite file states every tensor's shape; the reader checks the file's shapes against
// these rules where one exists, so a file whose shapes contradict its operator is refused
// by name instead of being planned wrong. Private to ir/: read through the op records.
#pragma once

#include "memledger/ir/shape_rule.h"

namespace memledger::tflite_shapes {

// CONV_2D and DEPTHWISE_CONV_2D: padding SAME | VALID, strides, dilations.
std::vector<TensorType> conv_2d(const ShapeInputs&);
std::vector<TensorType> depthwise_conv_2d(const ShapeInputs&);
// AVERAGE_POOL_2D, MAX_POOL_2D: filter_width/height, strides, padding.
std::vector<TensorType> pool_2d(const ShapeInputs&);
// FULLY_CONNECTED: [batch, O], or the input's dims with the last one O (keep_num_dims).
std::vector<TensorType> fully_connected(const ShapeInputs&);
// ADD, SUB, MUL: numpy broadcasting of inputs 0 and 1.
std::vector<TensorType> broadcast(const ShapeInputs&);
// Activations, SOFTMAX, QUANTIZE, DEQUANTIZE: the shape of input 0.
std::vector<TensorType> same_shape(const ShapeInputs&);
// RESHAPE: new_shape (options) or the shape input, one -1 resolved; SQUEEZE: squeeze_dims.
std::vector<TensorType> reshape(const ShapeInputs&);
std::vector<TensorType> squeeze(const ShapeInputs&);
// CONCATENATION along `axis`; MEAN over the axes of input 1 (keep_dims); PAD by input 1's
// [rank, 2] paddings; TRANSPOSE by input 1's permutation; RESIZE_NEAREST_NEIGHBOR to input
// 1's [new_height, new_width].
std::vector<TensorType> concatenation(const ShapeInputs&);
std::vector<TensorType> mean(const ShapeInputs&);
std::vector<TensorType> pad(const ShapeInputs&);
std::vector<TensorType> transpose(const ShapeInputs&);
std::vector<TensorType> resize_nearest(const ShapeInputs&);
// SVDF: output [batch, num_filters / rank]; output 1 (the new state) the state's shape.
std::vector<TensorType> svdf(const ShapeInputs&);

}  // namespace memledger::tflite_shapes
