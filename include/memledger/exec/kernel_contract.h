// What a kernel promises before it runs (DESIGN.md §4.4, P5): the workspace it uses,
// sized from shapes and the device profile, and which inputs' buffers its output may take
// (in-place). The planner trusts these figures and the arena runner checks them: a
// declared workspace that is never touched is reported as a stale reservation.
#pragma once

#include <cstdint>
#include <vector>

#include "memledger/device/profile.h"
#include "memledger/ir/graph.h"

namespace memledger {

struct KernelContract {
  int64_t workspace_bytes = 0;
  // Inputs whose buffer the (single) output may take: the kernel stays correct when its
  // output is written over that input. Whether it is legal (no later reader) is the
  // planner's decision, not the kernel's.
  std::vector<int> overwritable_inputs;
};

// The contract of the kernel that runs `node` on `profile`; an Error naming the node when
// the operator is not supported.
KernelContract kernel_contract(const Graph& graph, NodeId node, const DeviceProfile& profile);

}  // namespace memledger
