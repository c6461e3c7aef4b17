// The kernel table: for every operator the interpreter runs, what the kernel needs (check)
// and how it computes (run). What it promises — workspace bytes and overwritable inputs
// (DESIGN.md §4.4) — is the operator's record in the op table (ir/op_table.h), which the
// planner reads without running anything; a kernel attaches to that record and keeps it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/core/tensor.h"
#include "memledger/device/profile.h"
#include "memledger/ir/graph.h"
#include "memledger/ir/op_table.h"

namespace memledger::exec {

// A dense row-major tensor in memory the kernel reads (an input) or writes (an output).
// data is null for an omitted optional input or output.
template <typename Byte>
struct BasicTensorView {
  DType dtype = DType::kFloat32;
  Shape shape;
  Byte* data = nullptr;

  bool present() const { return data != nullptr; }
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  int rank() const { return static_cast<int>(shape.size()); }
  template <typename T>
  auto as() const {
    ML_CHECK(holds_type<T>(dtype), "kernel reads a {} tensor as another type", dtype_name(dtype));
    if constexpr (std::is_const_v<Byte>)
      return reinterpret_cast<const T*>(data);
    else
      return reinterpret_cast<T*>(data);
  }
};
using InputView = BasicTensorView<const std::byte>;
using OutputView = BasicTensorView<std::byte>;

struct KernelContext {
  const Graph& graph;
  const Node& node;
  std::vector<InputView> inputs;    // one per node input
  std::vector<OutputView> outputs;  // one per node output
  std::span<std::byte> workspace;   // exactly the contract's bytes

  bool has_input(size_t i) const { return i < inputs.size() && inputs[i].present(); }
  const InputView& in(size_t i) const {
    ML_CHECK(has_input(i), "node {}: input {} missing", node.label(), i);
    return inputs[i];
  }
  OutputView& out(size_t i = 0) {
    ML_CHECK(i < outputs.size() && outputs[i].present(), "node {}: output {} missing", node.label(), i);
    return outputs[i];
  }
  bool has_output(size_t i) const { return i < outputs.size() && outputs[i].present(); }
};

struct Kernel {
  // Why this node cannot run ("input 0 is int16"), or empty when it can. Called before
  // anything runs, so an unsupported node fails the run up front.
  std::function<std::string(const Graph&, const Node&)> check;
  std::function<void(KernelContext&)> run;
};

// The kernel for `node`, or null when no kernel runs its operator.
const Kernel* find_kernel(const Node& node);

// Registration, one function per kernel family (kernels_<family>.cpp).
using KernelTable = std::vector<std::pair<std::string, Kernel>>;  // "domain:op" (ONNX: ":op")

// A KernelTable key, "domain:op", built a piece at a time (one concatenating expression of
// std::string temporaries trips GCC 12's -Warray-bounds once inlined).
inline std::string kernel_key(std::string_view domain, std::string_view op) {
  std::string key(domain);
  key += ':';
  key += op;
  return key;
}
void add_elementwise_kernels(KernelTable& table);
void add_conv_kernels(KernelTable& table);
void add_matmul_kernels(KernelTable& table);
void add_normalization_kernels(KernelTable& table);
void add_data_movement_kernels(KernelTable& table);
void add_quantization_kernels(KernelTable& table);
void add_logic_kernels(KernelTable& table);
void add_index_kernels(KernelTable& table);
void add_resample_kernels(KernelTable& table);
void add_einsum_kernels(KernelTable& table);
void add_nn_extra_kernels(KernelTable& table);
void add_patch_kernels(KernelTable& table);
// The integer operators (kernels_quantized_*.cpp): an entry for an operator that also has a
// float kernel above takes the nodes whose data are quantized (quantized.h), the float
// kernel the rest. An integer entry without run keeps the float kernel's run (byte-exact
// ops such as MaxPool or nearest Resize when input and output share their quantization).
void add_quantized_conv_kernels(KernelTable& table);
void add_quantized_matmul_kernels(KernelTable& table);
void add_quantized_elementwise_kernels(KernelTable& table);
void add_tflite_kernels(KernelTable& table);  // exec/tflite/: the "tflite:<OP>" kernels

// ---- helpers shared by the kernel families ----

// Calls f(T{}) for the C type of `type`: float, double, the 8- to 64-bit integers, and bool
// when kWithBool; false when the type has none here.
template <bool kWithBool, typename F>
bool with_element_type(DType type, F&& f) {
  switch (type) {
    case DType::kFloat32:
      f(float{});
      return true;
    case DType::kFloat64:
      f(double{});
      return true;
    case DType::kInt8:
      f(int8_t{});
      return true;
    case DType::kUInt8:
      f(uint8_t{});
      return true;
    case DType::kInt16:
      f(int16_t{});
      return true;
    case DType::kUInt16:
      f(uint16_t{});
      return true;
    case DType::kInt32:
      f(int32_t{});
      return true;
    case DType::kInt64:
      f(int64_t{});
      return true;
    case DType::kBool:
      if constexpr (kWithBool) {
        f(bool{});
        return true;
      }
      return false;
    default:
      return false;
  }
}
template <typename F>
bool with_value_type(DType type, F&& f) {
  return with_element_type<true>(type, std::forward<F>(f));
}
template <typename F>
bool with_number_type(DType type, F&& f) {
  return with_element_type<false>(type, std::forward<F>(f));
}

// Checks.
std::string check_dtypes(const Graph& graph, const Node& node, size_t input, std::initializer_list<DType> allowed);
// Every listed input (present ones) has a dtype in `allowed`.
std::string check_float_inputs(const Graph& graph, const Node& node, std::initializer_list<size_t> inputs);

// Reads an integer tensor input (int32 or int64) as int64 values.
std::vector<int64_t> read_ints(const InputView& view);
// Normalises a possibly negative axis for `rank`; an Error naming the node when outside.
int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank);

// Dense row-major element strides.
std::vector<int64_t> dense_strides(const Shape& shape);
// `shape`'s dense strides seen from `target` (right-aligned), 0 on broadcast axes.
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& target);

// Copies `shape` elements of `element_bytes` each between strided views (element strides).
// Adjacent axes merge and contiguous rows go through memcpy. Overlap is not allowed
// unless dst == src with equal strides (then nothing is copied).
void strided_copy(std::byte* dst, std::span<const int64_t> dst_strides, const std::byte* src,
                  std::span<const int64_t> src_strides, const Shape& shape, int element_bytes);

}  // namespace memledger::exec
