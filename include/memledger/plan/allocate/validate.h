// The oracle every plan is checked against (in tests after every planning, and in the CLI
// before a solution is written): no two buffers live at one step share a byte, offsets are
// aligned, fixed offsets are kept, and the arena holds every buffer. O(n log n) by a sweep
// over time that keeps the live buffers ordered by offset.
#pragma once

#include <optional>
#include <string>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

// The first violation as a sentence naming the buffers and the step, or nothing if the
// solution is valid. The problem itself must pass check_problem().
std::optional<std::string> find_violation(const Problem& problem, const Solution& solution);

}  // namespace memledger::allocate
