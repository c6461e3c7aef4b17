// Planning a model on a device with several memory banks ([[banks]] in its profile): the
// same liveness and ledger as plan_memory, then every owning buffer gets a bank and an
// offset by allocate::plan_banked. A buffer's accessed bytes are its size written once by
// its producer (a graph input: once by whoever loads it), read once per consuming input of a
// node, a workspace's written and read once; an in-place output's accesses are its root's.
// Constants under `constants = "external"` stay in a read-only bank that holds constants
// (read in place); without one they stay outside every bank, as external inputs do.
//
// fit (src/fit/) plans every candidate with it on such a device and weighs the slow-bank
// traffic of each (slow_bank_traffic) against the extra MACs of patches.
#pragma once

#include "memledger/plan/memory_plan.h"

namespace memledger {

// The profile must have banks. A buffer no bank may hold is an Error naming it and its kind.
MemoryPlan plan_memory_banked(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options = {},
                              const PlacementOptions& placement = {});

// A banked plan as one arena: the writable banks laid end to end, each from a base aligned to
// every bank's alignment and `gap_bytes` past the end of the one before, each buffer at its
// bank's base plus its offset; constants read in place from a read-only bank are external
// again. The bytes of different banks never meet, so this is how the arena runner
// (exec/arena_run) proves a banked plan: each bank exactly its planned bytes, the gaps
// between them free bytes its after-node check treats as guards (ArenaBufferProvider's
// kGuardBytes), so a write past one bank's end is caught as past an arena's. A plan without
// banks comes back unchanged.
MemoryPlan banks_end_to_end(MemoryPlan plan, int64_t gap_bytes = 0);

// What a banked plan reads and writes in slower memory: the accessed bytes of the writable
// banks whose access cost is above the fastest writable bank that holds activations, and the
// cycles they cost beyond what they would there (Σ accessed × (cost − fastest cost)). Flash
// read in place is left out: every plan of the model reads its weights there alike. Zero for
// a plan without banks.
struct SlowTraffic {
  int64_t bytes = 0;
  double cycles = 0;
};
SlowTraffic slow_bank_traffic(const MemoryPlan& plan);

}  // namespace memledger
