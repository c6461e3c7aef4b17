// Registration of every TFLite kernel family (see kernels.h).
#include "exec/tflite/kernels.h"

namespace memledger::exec {

void add_tflite_kernels(KernelTable& table) {
  tflite::add_conv_kernels(table);
  tflite::add_fully_connected_kernels(table);
  tflite::add_pool_kernels(table);
  tflite::add_elementwise_kernels(table);
  tflite::add_activation_kernels(table);
  tflite::add_softmax_kernels(table);
  tflite::add_data_movement_kernels(table);
  tflite::add_quantize_kernels(table);
  tflite::add_svdf_kernels(table);
}

}  // namespace memledger::exec
