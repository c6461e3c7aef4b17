// The kernel table (see kernel.h), plus the helpers the kernel families share.
#include <cstring>
#include <map>

#include "kernel.h"
#include "quantized.h"
#include "strided.h"

namespace memledger {
namespace exec {
namespace {

// One kernel that sends integer nodes (quantized.h) to `integer` and the rest to `real`.
Kernel dispatch_integer(Kernel real, Kernel integer) {
  auto run_integer = integer.run ? integer.run : real.run;
  return Kernel{
      .check = [real_check = real.check, integer_check = integer.check](
                   const Graph& g,
                   const Node& n) { return is_integer_node(g, n) ? integer_check(g, n) : real_check(g, n); },
      .run =
          [run_real = real.run, run_integer](KernelContext& ctx) {
            return is_integer_node(ctx.graph, ctx.node) ? run_integer(ctx) : run_real(ctx);
          },
  };
}

const std::map<std::string, Kernel, std::less<>>& kernel_table() {
  static const std::map<std::string, Kernel, std::less<>> table = [] {
    KernelTable entries;
    add_elementwise_kernels(entries);
    add_conv_kernels(entries);
    add_matmul_kernels(entries);
    add_normalization_kernels(entries);
    add_data_movement_kernels(entries);
    add_quantization_kernels(entries);
    add_logic_kernels(entries);
    add_index_kernels(entries);
    add_resample_kernels(entries);
    add_einsum_kernels(entries);
    add_nn_extra_kernels(entries);
    add_patch_kernels(entries);
    add_tflite_kernels(entries);
    std::map<std::string, Kernel, std::less<>> result;
    for (auto& [key, kernel] : entries) {
      // A kernel attaches to an op table record: what it promises is stated there.
      const size_t colon = key.find(':');
      ML_CHECK(find_op(std::string_view(key).substr(0, colon), std::string_view(key).substr(colon + 1)) != nullptr,
               "kernel '{}' has no op table record", key);
      const bool inserted = result.emplace(key, std::move(kernel)).second;
      ML_CHECK(inserted, "kernel '{}' registered twice", key);
    }
    KernelTable integer;
    add_quantized_conv_kernels(integer);
    add_quantized_matmul_kernels(integer);
    add_quantized_elementwise_kernels(integer);
    for (auto& [key, kernel] : integer) {
      const auto it = result.find(key);
      ML_CHECK(it != result.end() || kernel.run, "integer kernel '{}' has no run and no float kernel", key);
      if (it == result.end()) {
        ML_CHECK(find_op("", std::string_view(key).substr(1)) != nullptr, "kernel '{}' has no op table record", key);
        result.emplace(key, std::move(kernel));
        continue;
      }
      it->second = dispatch_integer(std::move(it->second), std::move(kernel));
    }
    return result;
  }();
  return table;
}

}  // namespace

const Kernel* find_kernel(const Node& node) {
  const std::string domain = node.domain == "ai.onnx" ? "" : node.domain;
  const auto it = kernel_table().find(domain + ":" + node.op);
  return it == kernel_table().end() ? nullptr : &it->second;
}

std::string check_dtypes(const Graph& g, const Node& node, size_t input, std::initializer_list<DType> allowed) {
  if (input >= node.inputs.size() || !node.inputs[input].valid()) return {};
  const DType type = g.value(node.inputs[input]).dtype;
  for (DType a : allowed)
    if (a == type) return {};
  return fmt::format("input {} is {}", input, dtype_name(type));
}

std::string check_float_inputs(const Graph& g, const Node& node, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs)
    if (auto why = check_dtypes(g, node, i, {DType::kFloat32}); !why.empty()) return why;
  return {};
}

std::vector<int64_t> read_ints(const InputView& view) {
  std::vector<int64_t> values(static_cast<size_t>(view.elements()));
  if (values.empty()) return values;  // an empty tensor may have no data pointer at all
  if (view.dtype == DType::kInt64) {
    std::memcpy(values.data(), view.data, values.size() * sizeof(int64_t));
  } else if (view.dtype == DType::kInt32) {
    const int32_t* p = view.as<int32_t>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = p[i];
  } else {
    fail("expected an int32 or int64 tensor, got {}", dtype_name(view.dtype));
  }
  return values;
}

int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    fail("node {}: axis {} is out of range for rank {}", node.label(), axis, rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> dense_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& target) {
  ML_CHECK(shape.size() <= target.size(), "broadcast to a lower rank");
  std::vector<int64_t> result(target.size(), 0);
  const std::vector<int64_t> own = dense_strides(shape);
  const size_t shift = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    ML_CHECK(shape[i] == target[shift + i] || shape[i] == 1, "broadcast {} to {}", shape_to_string(shape),
             shape_to_string(target));
    result[shift + i] = shape[i] == 1 ? 0 : own[i];
  }
  return result;
}

void strided_copy(std::byte* dst, std::span<const int64_t> dst_strides, const std::byte* src,
                  std::span<const int64_t> src_strides, const Shape& shape, int element_bytes) {
  StridedLoop<2> loop(shape, {std::vector<int64_t>(dst_strides.begin(), dst_strides.end()),
                              std::vector<int64_t>(src_strides.begin(), src_strides.end())});
  if (dst == src && loop.strides[0] == loop.strides[1]) return;
  const int64_t eb = element_bytes;
  loop.for_each_row([&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& inner) {
    std::byte* d = dst + off[0] * eb;
    const std::byte* s = src + off[1] * eb;
    if (inner[0] == 1 && inner[1] == 1) {
      std::memmove(d, s, static_cast<size_t>(n * eb));
      return;
    }
    auto copy = [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * inner[0] * eb, s + i * inner[1] * eb, sizeof(T));
    };
    switch (element_bytes) {
      case 1:
        copy(uint8_t{});
        break;
      case 2:
        copy(uint16_t{});
        break;
      case 4:
        copy(uint32_t{});
        break;
      default:
        copy(uint64_t{});
        break;
    }
  });
}

}  // namespace exec

}  // namespace memledger
