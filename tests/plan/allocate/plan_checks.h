// Test helpers: every plan is checked against the validator and the lower bound.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

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

// The plan with these offsets, its arena and whether it is optimal filled in, checked as above.
inline Solution checked_plan(const Problem& problem, std::vector<int64_t> offsets, std::string algorithm) {
  Solution s{.offsets = std::move(offsets), .algorithm = std::move(algorithm)};
  s.arena_bytes = arena_bytes(problem, s.offsets);
  s.optimal = s.arena_bytes == lower_bound(problem).bytes;
  expect_valid_plan(problem, s);
  return s;
}

inline Buffer buffer(std::string id, int64_t lower, int64_t upper, int64_t size, int64_t alignment = 1) {
  return Buffer{std::move(id), size, alignment, lower, upper, std::nullopt};
}

// A small tight problem: `n` buffers of two steps or more over six steps (sizes 1-5), and
// one-step fillers that bring every step up to the peak (`capacity`). Buffers that meet in
// chains make the peak unreachable now and then (about one seed in ten for n = 7).
inline Problem random_chain_problem(uint32_t seed, int n, int64_t& capacity) {
  std::mt19937 rng(seed);  // raw outputs only: the same on every standard library
  constexpr int64_t kSteps = 6;
  Problem p;
  for (int i = 0; i < n; ++i) {
    const int64_t lower = rng() % (kSteps - 1);
    const int64_t upper = lower + 2 + rng() % (kSteps - lower - 1);
    const int64_t size = 1 + rng() % 5;
    p.buffers.push_back(buffer("r" + std::to_string(i), lower, upper, size));
  }
  std::vector<int64_t> live(kSteps, 0);
  for (const Buffer& b : p.buffers) {
    for (int64_t s = b.lower; s < b.upper; ++s) live[s] += b.size;
  }
  capacity = *std::max_element(live.begin(), live.end());
  for (int64_t s = 0; s < kSteps; ++s) {
    if (live[s] < capacity) p.buffers.push_back(buffer("f" + std::to_string(s), s, s + 1, capacity - live[s]));
  }
  return p;
}

// The smallest arena below `limit` by trying every (aligned) offset for every buffer (`limit` when
// none is smaller). Tiny problems only.
inline int64_t brute_force_optimum(const Problem& p, int64_t limit) {
  const size_t n = p.buffers.size();
  std::vector<int64_t> offsets(n, 0);
  int64_t best = limit;
  std::function<void(size_t)> place = [&](size_t i) {
    if (i == n) {
      best = std::min(best, arena_bytes(p, offsets));
      return;
    }
    for (int64_t o = 0; o + p.buffers[i].size < best; o += p.buffers[i].alignment) {
      offsets[i] = o;
      bool clash = false;
      for (size_t j = 0; j < i && !clash; ++j) {
        const Buffer& a = p.buffers[i];
        const Buffer& b = p.buffers[j];
        clash = a.lower < b.upper && b.lower < a.upper && o < offsets[j] + b.size && offsets[j] < o + a.size;
      }
      if (!clash) place(i + 1);
    }
  };
  place(0);
  return best;
}

}  // namespace memledger::allocate::testing
