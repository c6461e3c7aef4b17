// Test helpers: every plan is checked against the validator and the lower bound.
#pragma once

#include <gtest/gtest.h>

#include "memledger/plan/allocate/lower_bound.h"
#include "memledger/plan/allocate/problem.h"
#include "memledger/plan/allocate/validate.h"

namespace memledger::allocate::testing {

inline void expect_valid_plan(const Problem& problem, const Solution& solution) {
  const std::optional<std::string> violation = find_violation(problem, solution);
  EXPECT_FALSE(violation.has_value()) << solution.algorithm << ": " << violation.value_or("");
  EXPECT_EQ(solution.arena_bytes, arena_bytes(problem, solution.offsets)) << solution.algorithm;
  EXPECT_GE(solution.arena_bytes, lower_bound(problem).bytes) << solution.algorithm;
  if (solution.arena_bytes == lower_bound(problem).bytes) {
    EXPECT_TRUE(solution.optimal) << solution.algorithm;
  }
}

inline Buffer buffer(std::string id, int64_t lower, int64_t upper, int64_t size, int64_t alignment = 1) {
  return Buffer{std::move(id), size, alignment, lower, upper, std::nullopt};
}

}  // namespace memledger::allocate::testing
