// The JSON form of an allocation (`memledger allocate --json`), schema
// "memledger.allocate/1": the problem's size and lower bound, each planner's arena and time,
// the exact search's statistics (nodes, restarts, probes, the best arena over time), the
// capacity and the verdict against it.
#pragma once

#include <string>
#include <string_view>

#include "memledger/plan/allocate/planner.h"

namespace memledger::allocate {

// `source` names the problem (usually its file).
std::string allocation_json(const Problem& problem, const Allocation& allocation, std::string_view source);

}  // namespace memledger::allocate
