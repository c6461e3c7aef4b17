// The decision search at a capacity with slack: agrees with brute force on tiny problems
// (found and refuted), places slack instances within their known feasible capacity, and
// every placement it returns passes the validator.
#include "memledger/plan/allocate/decision_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "memledger/plan/allocate/perfect_packing.h"
#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using Outcome = DecisionResult::Outcome;
using testing::brute_force_optimum;
using testing::buffer;

std::chrono::steady_clock::time_point far_away() { return std::chrono::steady_clock::now() + std::chrono::hours(1); }

Solution solution_of(const Problem& p, const DecisionResult& r) {
  Solution s;
  s.offsets = r.offsets;
  s.arena_bytes = arena_bytes(p, s.offsets);
  s.algorithm = "decision";
  s.optimal = s.arena_bytes == lower_bound(p).bytes;
  return s;
}

// Every capacity from the lower bound up to the optimum: refuted below it, found at it.
// Tight chains are where the lower bound is sometimes out of reach; without their fillers
// they have slack.
TEST(AllocateDecisionSearch, AgreesWithBruteForceOnTinyProblems) {
  int refuted = 0, found = 0;
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    int64_t peak = 0;
    Problem p = testing::random_chain_problem(seed, 7, peak);
    if (seed % 3 == 0) std::erase_if(p.buffers, [](const Buffer& b) { return b.id[0] == 'f'; });
    const int64_t optimum = brute_force_optimum(p, 1 << 20);
    SCOPED_TRACE(seed);
    for (int64_t capacity = lower_bound(p).bytes; capacity <= optimum; ++capacity) {
      const DecisionResult r = decide_placement(p, capacity, far_away());
      if (capacity < optimum) {
        EXPECT_EQ(r.outcome, Outcome::kInfeasible) << "capacity " << capacity;
        ++refuted;
      } else {
        ASSERT_EQ(r.outcome, Outcome::kFound) << "capacity " << capacity;
        const Solution s = solution_of(p, r);
        testing::expect_valid_plan(p, s);
        EXPECT_LE(s.arena_bytes, capacity);
        ++found;
      }
    }
  }
  EXPECT_GE(refuted, 3);  // the refutations are exercised, not only the easy finds
  EXPECT_EQ(found, 100);
}

// Chains with the fillers of every other step, seven buffers (slack in some steps, none in
// others): at the brute-force optimum the search finds a placement, so the waste rules and the
// dominance rules (raised wells, stacks of one lifetime) do not cut off the only placements;
// one byte below it (where that is not below the lower bound) it refutes. (These chains
// rarely need more than the lower bound: the refutations are AgreesWithBruteForceOnTinyProblems'.)
TEST(AllocateDecisionSearch, AgreesWithBruteForceWithSlack) {
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    int64_t peak = 0;
    Problem p = testing::random_chain_problem(seed, 7, peak);
    // Fillers of every other step kept: a problem with slack in some steps, none in others.
    std::erase_if(p.buffers, [&](const Buffer& b) { return b.id[0] == 'f' && (b.lower + seed) % 2 == 0; });
    const int64_t optimum = brute_force_optimum(p, 1 << 20);
    SCOPED_TRACE(seed);
    const DecisionResult at = decide_placement(p, optimum, far_away());
    ASSERT_EQ(at.outcome, Outcome::kFound);
    const Solution s = solution_of(p, at);
    testing::expect_valid_plan(p, s);
    EXPECT_LE(s.arena_bytes, optimum);
    if (optimum > lower_bound(p).bytes) {
      EXPECT_EQ(decide_placement(p, optimum - 1, far_away()).outcome, Outcome::kInfeasible);
    }
  }
}

// Both searches are complete on tight problems, so they must agree (perfect packing is
// checked against brute force in its own test).
TEST(AllocateDecisionSearch, AgreesWithPerfectPackingOnTightProblems) {
  const auto far = far_away();
  int refuted = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    int64_t capacity = 0;
    const Problem p = testing::random_chain_problem(seed, 8, capacity);
    SCOPED_TRACE(seed);
    const PerfectPackingResult packing = find_perfect_packing(p, capacity, far);
    const DecisionResult r = decide_placement(p, capacity, far);
    ASSERT_NE(packing.outcome, PerfectPackingResult::Outcome::kTimeout);
    EXPECT_EQ(r.outcome == Outcome::kFound, packing.outcome == PerfectPackingResult::Outcome::kFound);
    EXPECT_NE(r.outcome, Outcome::kUnknown);
    if (r.outcome == Outcome::kFound) testing::expect_valid_plan(p, solution_of(p, r));
    refuted += r.outcome == Outcome::kInfeasible ? 1 : 0;
  }
  EXPECT_GE(refuted, 10);
}

// Sizes that share a divisor every alignment divides are searched in that unit, completely.
TEST(AllocateDecisionSearch, AlignedSizesAreSearchedInTheirUnit) {
  const Problem p{
      {buffer("a", 0, 2, 64, 64), buffer("b", 1, 3, 128, 32), buffer("c", 2, 4, 64, 64), buffer("d", 0, 1, 128, 64)}};
  const DecisionResult fits = decide_placement(p, 192, far_away());
  ASSERT_EQ(fits.outcome, Outcome::kFound);
  testing::expect_valid_plan(p, solution_of(p, fits));
  EXPECT_EQ(decide_placement(p, 191, far_away()).outcome, Outcome::kInfeasible);
}

// Alignments that do not divide the sizes: placements stay valid, refutations are not claimed.
TEST(AllocateDecisionSearch, UnevenAlignmentIsValidButNotAProof) {
  const Problem p{{buffer("a", 0, 2, 3, 1), buffer("b", 1, 3, 5, 4), buffer("c", 0, 1, 2, 2)}};
  const DecisionResult fits = decide_placement(p, 9, far_away());
  ASSERT_EQ(fits.outcome, Outcome::kFound);
  const Solution s = solution_of(p, fits);
  testing::expect_valid_plan(p, s);
  EXPECT_LE(s.arena_bytes, 9);
  EXPECT_NE(decide_placement(p, 7, far_away()).outcome, Outcome::kFound);
  EXPECT_NE(decide_placement(p, 7, far_away()).outcome, Outcome::kInfeasible);
}

class AllocateSlackInstances : public ::testing::TestWithParam<CutStyle> {};

TEST_P(AllocateSlackInstances, PlacedWithinTheirKnownCapacity) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const SlackInstance h = generate_slack_instance(seed, 120, 6, GetParam(), 100'000);
    SCOPED_TRACE(seed);
    const int64_t witness_arena = arena_bytes(h.problem, h.witness);
    testing::expect_valid_plan(h.problem, {h.witness, witness_arena, "witness", witness_arena == h.lower_bound});
    EXPECT_LE(witness_arena, h.capacity);
    const DecisionResult r = decide_placement(h.problem, h.capacity, far_away());
    ASSERT_EQ(r.outcome, Outcome::kFound);
    const Solution s = solution_of(h.problem, r);
    testing::expect_valid_plan(h.problem, s);
    EXPECT_LE(s.arena_bytes, h.capacity);
  }
}

// Small instances searched to the end: a capacity known to be feasible is never refuted
// (the pruning and dominance rules, and the jumps back over unrelated decisions, keep
// some placement), and every placement found is valid.
TEST_P(AllocateSlackInstances, SmallOnesAreNeverRefutedAtTheirKnownCapacity) {
  int found = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const int64_t pieces = 8 + static_cast<int64_t>(seed % 17);
    const SlackInstance h = generate_slack_instance(seed, pieces, 1 + static_cast<int64_t>(seed % 4), GetParam(), 64);
    SCOPED_TRACE(seed);
    const DecisionResult r = decide_placement(h.problem, h.capacity, far_away());
    ASSERT_EQ(r.outcome, Outcome::kFound);
    const Solution s = solution_of(h.problem, r);
    testing::expect_valid_plan(h.problem, s);
    EXPECT_LE(s.arena_bytes, h.capacity);
    ++found;
  }
  EXPECT_EQ(found, 400);
}

// A search given its progress back goes on where its restarts stopped: at each limit it decides
// as one call with that limit would, after the same nodes in all, and placed instances take the
// same offsets, while the nodes searched over the rounds are about half of what calls searching
// from the start take.
TEST_P(AllocateSlackInstances, ResumedRoundsSearchAsOneCallWithTheirLimit) {
  int resumed = 0;  // instances decided after more than one round
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const SlackInstance h = generate_slack_instance(seed, 240, 20, GetParam(), 1 << 20);
    SCOPED_TRACE(seed);
    SearchProgress progress;
    int64_t fresh_nodes = 0, resumed_nodes = 0;
    for (int64_t limit = 5'000; limit <= 40'000; limit *= 2) {
      const DecisionResult fresh = decide_placement(h.problem, h.capacity, far_away(), {}, limit);
      const int64_t before = progress.nodes;
      const DecisionResult r = decide_placement(h.problem, h.capacity, far_away(), {}, limit, &progress);
      fresh_nodes += fresh.nodes;
      resumed_nodes += r.nodes;
      ASSERT_EQ(r.outcome, fresh.outcome) << "limit " << limit;
      EXPECT_EQ(before + r.nodes, fresh.nodes) << "limit " << limit;
      EXPECT_LE(progress.nodes, limit + 1);  // a round stopped by its own limit counts one node more
      if (r.outcome == Outcome::kUnknown) continue;
      EXPECT_EQ(r.offsets, fresh.offsets);
      if (limit > 5'000) {
        ++resumed;
        EXPECT_LT(resumed_nodes, fresh_nodes * 3 / 4);
      }
      break;
    }
  }
  EXPECT_GE(resumed, 1);  // (seeds 1-6: guillotine 3, brick 1 and 6)
}

INSTANTIATE_TEST_SUITE_P(Styles, AllocateSlackInstances, ::testing::Values(CutStyle::kGuillotine, CutStyle::kBrick),
                         [](const auto& param_info) {
                           return param_info.param == CutStyle::kGuillotine ? "Guillotine" : "Brick";
                         });

TEST(AllocateDecisionSearch, ABudgetOfZeroDecidesNothingHard) {
  const SlackInstance h = generate_slack_instance(4, 300, 15, CutStyle::kGuillotine);
  const DecisionResult r =
      decide_placement(h.problem, h.lower_bound, std::chrono::steady_clock::now() - std::chrono::seconds(1));
  EXPECT_NE(r.outcome, Outcome::kFound);
}

// One decision per buffer, thousands deep: the search keeps its frames on the heap, so
// depth is no limit (it used to give up at 1500 levels of recursion). The sections overlap
// like a staircase, so the problem does not split into parts, and the capacity leaves slack.
TEST(AllocateDecisionSearch, ThousandsOfDecisionsDeepAreNoLimit) {
  Problem p;
  int64_t total = 0;
  for (int64_t k = 0; k < 6000; ++k) {
    const int64_t size = 1 + k % 7;
    p.buffers.push_back(buffer("b" + std::to_string(k), k % 3, 4 + k % 5, size));
    total += size;
  }
  const DecisionResult r = decide_placement(p, total + 3, far_away());
  ASSERT_EQ(r.outcome, Outcome::kFound);
  EXPECT_GE(r.nodes, 6000);
  const Solution s = solution_of(p, r);
  testing::expect_valid_plan(p, s);
  EXPECT_LE(s.arena_bytes, total + 3);
}

TEST(AllocateDecisionSearch, CapacityBelowALiveSectionIsRefutedAtOnce) {
  const Problem p{{buffer("a", 0, 2, 10), buffer("b", 1, 3, 10)}};
  const DecisionResult r = decide_placement(p, 19, far_away());
  EXPECT_EQ(r.outcome, Outcome::kInfeasible);
  EXPECT_LE(r.nodes, 1);
}

// Every placement of these four leaves byte 1 empty at step 1 (p and q overlap there, r and s
// fill steps 0 and 2 beside them): with hole candidates (no position left empty besides), one
// for that byte places them; none, or one too large for the slack, places nothing and proves
// nothing.
TEST(AllocateDecisionSearchWithHoles, TheSlackInTheMiddleNeedsACandidateThatFitsIt) {
  const Problem p{{buffer("p", 0, 2, 1), buffer("q", 1, 3, 1), buffer("r", 0, 1, 2), buffer("s", 2, 3, 2)}};
  ASSERT_EQ(decide_placement(p, 3, far_away()).outcome, Outcome::kFound);
  EXPECT_EQ(decide_placement_with_holes(p, {}, 3, far_away()).outcome, Outcome::kUnknown);
  EXPECT_EQ(decide_placement_with_holes(p, {buffer("wide", 1, 2, 2)}, 3, far_away()).outcome, Outcome::kUnknown);
  const DecisionResult r =
      decide_placement_with_holes(p, {buffer("wide", 1, 2, 2), buffer("h", 1, 2, 1)}, 3, far_away());
  ASSERT_EQ(r.outcome, Outcome::kFound);
  const Solution s = solution_of(p, r);
  testing::expect_valid_plan(p, s);
  EXPECT_LE(s.arena_bytes, 3);
  // Below the lower bound nothing is placed, and nothing is refuted either.
  EXPECT_EQ(decide_placement_with_holes(p, {buffer("h", 1, 2, 1)}, 2, far_away()).outcome, Outcome::kUnknown);
}

// The pieces taken out of a cut, offered as candidates, fill its slack exactly: with no position
// left empty, the search places every such instance (those whose removed pieces start and end
// at steps of the buffers left; others could not be offered whole).
TEST_P(AllocateSlackInstances, TheirRemovedPiecesAsHoleCandidatesPlaceThem) {
  int offered = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const SlackInstance h = generate_slack_instance(seed, 40 + static_cast<int64_t>(seed % 40),
                                                    2 + static_cast<int64_t>(seed % 5), GetParam(), 1000);
    std::vector<int64_t> steps;
    for (const Buffer& b : h.problem.buffers) steps.insert(steps.end(), {b.lower, b.upper});
    std::vector<Buffer> holes = h.removed;
    const bool whole = std::all_of(holes.begin(), holes.end(), [&](const Buffer& hole) {
      return std::count(steps.begin(), steps.end(), hole.lower) > 0 &&
             std::count(steps.begin(), steps.end(), hole.upper) > 0;
    });
    if (!whole) continue;
    for (Buffer& hole : holes) hole.fixed_offset.reset();
    SCOPED_TRACE(seed);
    const DecisionResult r = decide_placement_with_holes(h.problem, holes, h.capacity, far_away());
    ASSERT_EQ(r.outcome, Outcome::kFound);
    const Solution s = solution_of(h.problem, r);
    testing::expect_valid_plan(h.problem, s);
    EXPECT_LE(s.arena_bytes, h.capacity);
    ++offered;
  }
  EXPECT_GE(offered, 20);
}

}  // namespace
}  // namespace memledger::allocate
