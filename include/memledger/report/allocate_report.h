// The text of `memledger allocate`: one placement run on a problem, its arena against the
// lower bound, and for the exact search how far it got (nodes, restarts, the best arena over
// time, the bound it proved).
#pragma once

#include <cstdint>
#include <string>

#include "memledger/plan/allocate/planner.h"
#include "memledger/plan/allocate/problem.h"

namespace memledger {

std::string planner_run_text(const allocate::Problem& problem, const allocate::PlannerRun& run, int64_t lower_bound);

// The whole text: the problem (named `source`), its lower bound, each run, the best arena and
// the capacity's verdict.
std::string allocation_text(const std::string& source, const allocate::Problem& problem,
                            const allocate::Allocation& allocation);

}  // namespace memledger
