// The per-bank ledger of a plan on a device with [[banks]]: for each bank its buffers, bytes,
// peak-live (its arena's lower bound), arena, accessed bytes and traffic cost, in text and in
// the JSON report, with the traffic's lower bound and what does not fit where.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "memledger/plan/memory_plan.h"

namespace memledger {

// "" for a plan without banks.
std::string bank_ledger_text(const MemoryPlan& plan);
// Adds "banks" (the ledger per bank and the traffic) and each buffer's "bank" to a JSON plan
// report; nothing for a plan without banks.
void add_banks_json(nlohmann::json& report, const MemoryPlan& plan);
// Where buffer i lives: "dtcm:1024", "external", or its offset for a plan without banks.
std::string buffer_location(const MemoryPlan& plan, size_t i);

}  // namespace memledger
