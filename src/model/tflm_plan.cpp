#include "memledger/model/tflm_plan.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/ir/op_table.h"

namespace memledger {

TflmExport tflm_offline_plan(const Graph& graph, const MemoryPlan& plan, const std::vector<ValueId>& tensor_values) {
  // Only the file's operators, in the file's order (node ids follow it).
  NodeId previous;
  for (NodeId n : plan.liveness.schedule) {
    const Node& node = graph.node(n);
    if (node.domain != kTfliteDomain && node.domain != kTfliteCustomDomain)
      fail(
          "the plan runs {} (a patch-based or rewritten stage), which TFLite Micro's offline plan "
          "cannot express: TFLM runs the file's operators layer by layer; plan or fit without patches",
          node.label());
    if (previous.valid() && n < previous)
      fail(
          "the plan runs {} before {}, another order than the file's; TFLM runs operators in the "
          "file's order, so its offline plan cannot express this one (plan in the model's order)",
          node.label(), graph.node(previous).label());
    previous = n;
  }
  TflmExport out;
  out.head_bytes = plan.head_bytes;
  out.persistent_bytes = plan.persistent_bytes;
  std::vector<int> buffer_of(graph.value_count(), -1);
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    if (b.value.valid()) buffer_of[static_cast<size_t>(b.value.index)] = static_cast<int>(i);
  }
  for (ValueId v : tensor_values) {
    int32_t offset = -1;
    const int b = v.valid() ? buffer_of[static_cast<size_t>(v.index)] : -1;
    if (b >= 0) {
      const LiveBuffer& buffer = plan.liveness.buffers[static_cast<size_t>(b)];
      const LiveBuffer& root = plan.liveness.buffers[static_cast<size_t>(plan.liveness.storage_of(b))];
      const bool in_head = !buffer.external && root.category != BufferCategory::kPersistent &&
                           root.category != BufferCategory::kConstant;
      if (in_head) {
        const int64_t at = plan.offsets[static_cast<size_t>(b)];
        ML_CHECK(at >= 0 && at < std::max<int64_t>(plan.head_bytes, 1), "buffer '{}' at {} outside the head of {} B",
                 buffer.name, at, plan.head_bytes);
        if (at > std::numeric_limits<int32_t>::max())
          fail("buffer '{}' at offset {} is beyond TFLM's int32 offsets", buffer.name, at);
        offset = static_cast<int32_t>(at);
      }
    }
    out.plan.offsets.push_back(offset);
    (offset >= 0 ? out.planned : out.left_to_tflm) += 1;
  }
  return out;
}

std::vector<uint8_t> write_tflm_plan(const std::string& model_path, const TflmExport& exported) {
  const std::string content = read_input_file(model_path, int64_t{2} << 30, "TFLite model");
  std::vector<uint64_t> aligned((content.size() + 7) / 8);
  std::memcpy(aligned.data(), content.data(), content.size());
  return write_offline_plan({reinterpret_cast<const uint8_t*>(aligned.data()), content.size()}, exported.plan,
                            model_path);
}

std::string describe_tflm_export(const TflmExport& e) {
  return fmt::format(
      "TFLite Micro offline plan (OfflineMemoryAllocation): {} tensors at memledger's offsets, {} left to TFLM "
      "(constants, variables, buffers outside the arena); arena: non-persistent head {} B + variables {} B "
      "(TFLM adds its own persistent tail)\n",
      e.planned, e.left_to_tflm, e.head_bytes, e.persistent_bytes);
}

}  // namespace memledger
