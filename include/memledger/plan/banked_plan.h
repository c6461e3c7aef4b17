// Planning a model on a device with several memory banks ([[banks]] in its profile): the
// same liveness and ledger as plan_memory, then every owning buffer gets a bank and an
// offset by allocate::plan_banked. A buffer's accessed bytes are its size written once by
// its producer (a graph input: once by whoever loads it), read once per consuming input of a
// node, a workspace's written and read once; an in-place output's accesses are its root's.
// Constants under `constants = "external"` stay in a read-only bank that holds constants
// (read in place); without one they stay outside every bank, as external inputs do.
//
// fit (src/fit/) still plans one arena of the profile's capacity_bytes (the first bank that
// holds activations); weighing spills to slower banks against patches is its next step and
// starts from this function.
#pragma once

#include "memledger/plan/memory_plan.h"

namespace memledger {

// The profile must have banks. A buffer no bank may hold is an Error naming it and its kind.
MemoryPlan plan_memory_banked(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options = {},
                              const PlacementOptions& placement = {});

// A banked plan as one arena: the writable banks laid end to end, each from a base aligned to
// every bank's alignment, each buffer at its bank's base plus its offset; constants read in
// place from a read-only bank are external again. The bytes of different banks never meet,
// so this is how the arena runner (exec/arena_run) proves a banked plan, with its guards
// around every buffer. A plan without banks comes back unchanged.
MemoryPlan banks_end_to_end(MemoryPlan plan);

}  // namespace memledger
