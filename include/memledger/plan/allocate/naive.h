// The no-reuse baseline: every buffer gets its own bytes, one after the other (fixed
// buffers stay where they are, the others start above them). Not good, only obviously
// right; the other planners are measured against it.
#pragma once

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

Solution plan_naive(const Problem& problem);

}  // namespace memledger::allocate
