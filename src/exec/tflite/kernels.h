// The TFLite kernel families (src/exec/tflite/<family>.cpp), each registering its
// "tflite:<OP>" kernels; add_tflite_kernels (exec/kernel.h) adds them all. The arithmetic
// follows TFLite's reference kernels (tensorflow/lite/kernels/internal/reference), so an
// int8 model computes the integers a TFLite runtime computes.
#pragma once

#include "exec/kernel.h"

namespace memledger::exec::tflite {

void add_conv_kernels(KernelTable& table);             // CONV_2D, DEPTHWISE_CONV_2D
void add_fully_connected_kernels(KernelTable& table);  // FULLY_CONNECTED
void add_pool_kernels(KernelTable& table);             // AVERAGE_POOL_2D, MAX_POOL_2D, MEAN
void add_elementwise_kernels(KernelTable& table);      // ADD, SUB, MUL
void add_activation_kernels(KernelTable& table);       // RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH, HARD_SWISH
void add_softmax_kernels(KernelTable& table);          // SOFTMAX
void add_data_movement_kernels(KernelTable& table);    // RESHAPE, SQUEEZE, CONCATENATION, PAD, TRANSPOSE, ...
void add_quantize_kernels(KernelTable& table);         // QUANTIZE, DEQUANTIZE
void add_svdf_kernels(KernelTable& table);             // SVDF

}  // namespace memledger::exec::tflite
