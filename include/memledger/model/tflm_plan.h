// A memledger plan as TFLite Micro's offline plan (OfflineMemoryAllocation): every tensor
// of subgraph 0 that the plan keeps in the arena's non-persistent head gets its planned
// offset; constants (flash), variables (TFLM's persistent tail), buffers held outside the
// arena and tensors the plan has no buffer for get -1 (TFLM plans them). TFLM runs the
// operators in the file's order, one after the other: a plan in another order, or one
// with patch-based stages (operators that are not the file's), cannot be expressed in its
// format and is refused with the reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memledger/plan/memory_plan.h"
#include "memledger/tflite/offline_plan.h"

namespace memledger {

struct TflmExport {
  OfflinePlan plan;
  int planned = 0;       // tensors at memledger's offsets
  int left_to_tflm = 0;  // tensors at -1
  int64_t head_bytes = 0;
  int64_t persistent_bytes = 0;
};

// Per tensor, the offset TFLM should use; an Error with the reason when the plan cannot be
// expressed in TFLM's format.
TflmExport tflm_offline_plan(const Graph& graph, const MemoryPlan& plan, const std::vector<ValueId>& tensor_values);

// The model file at `model_path` with `exported` written into it (write_offline_plan).
std::vector<uint8_t> write_tflm_plan(const std::string& model_path, const TflmExport& exported);

// "TFLite Micro offline plan: 23 tensors at memledger's offsets, 31 left to TFLM; arena head 672 B ..."
std::string describe_tflm_export(const TflmExport& exported);

}  // namespace memledger
