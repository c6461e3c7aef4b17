// Placement across several memory banks (a TCM, SRAMs, a PSRAM, a flash): every buffer gets
// a bank it may live in and an offset inside that bank. Like the rest of plan/allocate it
// knows no graph: plan/banked_plan.h turns a model's buffers into this problem.
//
// Objective: the least weighted traffic, Σ accessed bytes × the bank's access cost, subject to
// every bank's capacity and what may live where. Each bank's buffers are placed by the
// one-arena planners (planner.h) and checked by the validator, so the result is always a
// valid placement per bank; it fits when every bank's arena is within its capacity.
//
// Algorithm: greedy by access density (accessed bytes per byte of size), densest first, each
// buffer into the cheapest allowed bank whose live bytes stay within its capacity over the
// buffer's lifetime; banks whose placed arena overflows (fragmentation) give up their
// least dense buffer at the top of the arena to the next bank; then improvement by moves to
// cheaper banks and swaps with less dense buffers there, each kept only when the bank still
// places within its capacity. Exact — a branch and bound over every assignment, each leaf
// placed by the exact planner — when the problem has at most `exact_max_buffers` buffers and
// at most 2^20 assignments.
//
// Lower bound on the traffic: at each step the live buffers relaxed to fractions over cost
// levels (the summed capacity of the banks of each cost, a buffer no cheaper than its
// cheapest allowed bank), filled densest first, which is optimal for that relaxation; plus
// every other buffer at its cheapest allowed bank; the maximum over steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memledger/plan/allocate/planner.h"
#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

struct BankSpec {
  std::string name;
  int64_t capacity = 0;  // > 0
  int64_t alignment = 1;
  double access_cost = 1.0;  // per byte read or written
};

struct BankedBuffer {
  Buffer buffer;               // its alignment is replaced by the bank's
  int64_t accessed_bytes = 0;  // bytes read and written over the program
  std::vector<int> allowed;    // banks it may live in (indices into BankedProblem::banks)
};

struct BankedProblem {
  std::vector<BankSpec> banks;
  std::vector<BankedBuffer> buffers;
};

struct BankedOptions {
  Algorithm algorithm = Algorithm::kExact;  // how each bank's buffers are placed at the end
  double time_budget_seconds = 2.0;         // for the final placements, shared by the banks
  int exact_max_buffers = 12;               // exact bank assignment up to this many buffers
};

struct BankUse {
  Problem problem;                // the bank's buffers (aligned to the bank)
  std::vector<int> buffer_index;  // index into BankedProblem::buffers of each problem entry
  Solution solution;              // the bank's placement (validated)
  int64_t lower_bound_bytes = 0;  // no arena of this bank's buffers is smaller
  int64_t accessed_bytes = 0;
  double traffic_cost = 0;  // accessed bytes × the bank's cost
  bool fits = true;
};

struct BankedSolution {
  std::vector<int> bank;         // per buffer
  std::vector<int64_t> offsets;  // per buffer, from its bank's base
  std::vector<BankUse> banks;    // per bank
  double traffic_cost = 0;
  double lower_bound_cost = 0;      // no assignment that fits costs less
  bool assignment_optimal = false;  // the exact search proved traffic_cost minimal
  std::string method;               // "exact", or "greedy by access density + improvement"
  bool fits = true;
  // When it does not fit: what does not fit where and by how much, one sentence per bank.
  std::vector<std::string> overflows;
};

// Buffers must be well formed (check_problem) and each allow at least one bank; an Error
// names the first that does not.
BankedSolution plan_banked(const BankedProblem& problem, const BankedOptions& options = {});

}  // namespace memledger::allocate
