#include "memledger/plan/allocate/perfect_packing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "memledger/plan/allocate/exact.h"
#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/slack_fillers.h"
#include "memledger/plan/allocate/validate.h"
#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using Outcome = PerfectPackingResult::Outcome;
using testing::brute_force_optimum;
using testing::buffer;

std::chrono::steady_clock::time_point far_away() { return std::chrono::steady_clock::now() + std::chrono::hours(1); }

Solution solution_of(const Problem& p, const PerfectPackingResult& r) {
  Solution s;
  s.offsets = r.offsets;
  s.arena_bytes = arena_bytes(p, s.offsets);
  s.algorithm = "perfect packing";
  s.optimal = true;
  return s;
}

// A few random buffers over 5 steps, some aligned to 2, then one-step fillers that bring
// every step up to the fullest: tight, and small enough for brute force. Some have no
// perfect packing (small tight problems without alignment nearly always have one).
Problem random_tight_problem(uint32_t seed, int64_t& capacity) {
  std::mt19937 rng(seed);  // raw outputs only: the same on every standard library
  constexpr int64_t kSteps = 5;
  Problem p;
  for (int i = 0; i < 5; ++i) {
    const int64_t lower = rng() % (kSteps - 1);
    const int64_t upper = lower + 2 + rng() % (kSteps - lower - 1);  // two steps or more
    const int64_t size = 1 + rng() % 3;
    p.buffers.push_back(buffer("r" + std::to_string(i), lower, upper, size, rng() % 3 == 0 ? 2 : 1));
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

TEST(AllocatePerfectPacking, AgreesWithBruteForceOnSmallTightProblems) {
  int found = 0, refuted = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    int64_t capacity = 0;
    const Problem p = random_tight_problem(seed, capacity);
    SCOPED_TRACE(seed);
    ASSERT_TRUE(is_tight(p, capacity));
    const PerfectPackingResult r = find_perfect_packing(p, capacity, far_away());
    const bool packable = brute_force_optimum(p, capacity + 1) == capacity;
    if (packable) {
      ASSERT_EQ(r.outcome, Outcome::kFound);
      const Solution s = solution_of(p, r);
      testing::expect_valid_plan(p, s);
      EXPECT_EQ(s.arena_bytes, capacity);
      ++found;
    } else {
      EXPECT_EQ(r.outcome, Outcome::kInfeasible);
      ++refuted;
    }
  }
  // Both answers occur, so both are tested.
  EXPECT_GT(found, 30);
  EXPECT_GT(refuted, 10);
}

TEST(AllocatePerfectPacking, SolvesCutRectanglesToTheirOptimum) {
  for (const CutStyle style : {CutStyle::kBrick, CutStyle::kGuillotine}) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      const HardInstance h = generate_hard_instance(seed, 40 + 20 * static_cast<int64_t>(seed), style, 100'000);
      SCOPED_TRACE(::testing::Message() << "style " << static_cast<int>(style) << " seed " << seed);
      const PerfectPackingResult r = find_perfect_packing(h.problem, h.optimum, far_away());
      ASSERT_EQ(r.outcome, Outcome::kFound);
      const Solution s = solution_of(h.problem, r);
      testing::expect_valid_plan(h.problem, s);
      EXPECT_EQ(s.arena_bytes, h.optimum);
    }
  }
}

TEST(AllocatePerfectPacking, OnlyTightProblems) {
  const Problem slack{{buffer("a", 0, 2, 4), buffer("b", 1, 3, 4)}};  // steps 0 and 2 hold 4 of 8
  EXPECT_FALSE(is_tight(slack, 8));
  EXPECT_EQ(find_perfect_packing(slack, 8, far_away()).outcome, Outcome::kNotApplicable);
  const Problem gap{{buffer("a", 0, 1, 4), buffer("b", 2, 3, 4)}};  // nothing lives at step 1
  EXPECT_FALSE(is_tight(gap, 4));
  Problem fixed{{buffer("a", 0, 1, 4)}};
  fixed.buffers[0].fixed_offset = 0;
  EXPECT_FALSE(is_tight(fixed, 4));
  EXPECT_TRUE(is_tight(Problem{{buffer("a", 0, 2, 4), buffer("b", 0, 1, 4), buffer("c", 1, 2, 4)}}, 8));
  // Tight but too long for a search that recurses once per buffer.
  Problem chain;
  for (size_t i = 0; i <= kPerfectPackingMaxBuffers; ++i) {
    const auto step = static_cast<int64_t>(i);
    chain.buffers.push_back(buffer("c" + std::to_string(i), step, step + 1, 1));
  }
  EXPECT_TRUE(is_tight(chain, 1));
  EXPECT_EQ(find_perfect_packing(chain, 1, far_away()).outcome, Outcome::kNotApplicable);
}

TEST(AllocatePerfectPacking, AlignmentIsKept) {
  // 8 bytes: "a" (4, aligned to 4) cannot sit at 2, so the 2-byte buffers go above it.
  const Problem p{{buffer("a", 0, 2, 4, 4), buffer("b", 0, 1, 2), buffer("c", 0, 1, 2), buffer("d", 1, 2, 4)}};
  const PerfectPackingResult r = find_perfect_packing(p, 8, far_away());
  ASSERT_EQ(r.outcome, Outcome::kFound);
  testing::expect_valid_plan(p, solution_of(p, r));
}

TEST(AllocatePerfectPacking, StopsAtAPastDeadline) {
  // The clock is read every 1024 nodes: a deadline already past ends the search there.
  const HardInstance h = generate_hard_instance(1009, 450, CutStyle::kGuillotine);
  const PerfectPackingResult r = find_perfect_packing(h.problem, h.optimum, std::chrono::steady_clock::now());
  EXPECT_LE(r.nodes, 1024);
  if (r.outcome == Outcome::kFound) {
    testing::expect_valid_plan(h.problem, solution_of(h.problem, r));
  } else {
    EXPECT_EQ(r.outcome, Outcome::kTimeout);
  }
}

// With hole candidates, the search chooses the holes while it packs. Capacity 10 over two
// steps: a (0-1, 6 bytes), b (1-2, 6 bytes) and c (0-2, 2 bytes) leave 2 bytes of slack at
// each step, which the chosen holes must fill exactly.
TEST(AllocatePerfectPacking, ChoosesItsHolesAmongTheCandidates) {
  Problem p;
  p.buffers = {buffer("a", 0, 1, 6), buffer("b", 1, 2, 6), buffer("c", 0, 2, 2)};
  // Holes of 4 and 3 bytes do not fit the 2 bytes of slack: nothing can cover it.
  const std::vector<Buffer> wrong = {buffer("h1", 0, 2, 4), buffer("h2", 0, 2, 3)};
  EXPECT_EQ(find_packing_with_holes(p, wrong, 10, far_away()).outcome, Outcome::kInfeasible);
  // Either h4 or h2 + h3 covers it (h1 never fits).
  const std::vector<Buffer> holes = {buffer("h1", 0, 2, 4), buffer("h2", 0, 1, 2), buffer("h3", 1, 2, 2),
                                     buffer("h4", 0, 2, 2)};
  const PerfectPackingResult r = find_packing_with_holes(p, holes, 10, far_away());
  ASSERT_EQ(r.outcome, Outcome::kFound);
  ASSERT_EQ(r.offsets.size(), p.buffers.size());  // offsets of the buffers only
  testing::expect_valid_plan(p, solution_of(p, r));
  EXPECT_LE(arena_bytes(p, r.offsets), 10);
  // Without candidates the problem is not tight: nothing to do.
  EXPECT_EQ(find_perfect_packing(p, 10, far_away()).outcome, Outcome::kNotApplicable);
  // A candidate whose steps are not the problem's is left out; a section above the capacity
  // makes the packing not applicable.
  EXPECT_EQ(find_packing_with_holes(p, {buffer("odd", 0, 3, 2)}, 10, far_away()).outcome, Outcome::kInfeasible);
  EXPECT_EQ(find_packing_with_holes(p, holes, 7, far_away()).outcome, Outcome::kNotApplicable);
}

// Two holes of one lifetime show in the slack profile as one rise: on this guillotine instance the
// candidates hold only their sums, and the packing that places hole candidates in parts (up to a
// wall) places it where whole candidates do not within the same nodes.
TEST(AllocatePerfectPacking, PlacesHoleCandidatesInPartsWhereTwoHolesShareALifetime) {
  const SlackInstance h = generate_slack_instance(1004, 213, 11, CutStyle::kGuillotine);
  const std::vector<Buffer> candidates = slack_hole_candidates(h.problem, h.capacity);
  auto held = [&](const Buffer& hole) {
    return std::any_of(candidates.begin(), candidates.end(), [&](const Buffer& c) {
      return c.lower == hole.lower && c.upper == hole.upper && c.size == hole.size;
    });
  };
  EXPECT_FALSE(std::all_of(h.removed.begin(), h.removed.end(), held));
  constexpr int64_t kNodes = 1'000'000;
  EXPECT_NE(find_packing_with_holes(h.problem, candidates, h.capacity, far_away(), {}, kNodes).outcome,
            Outcome::kFound);
  const PerfectPackingResult r =
      find_packing_with_holes(h.problem, candidates, h.capacity, far_away(), {}, kNodes, HoleParts::kSplitAtWalls);
  ASSERT_EQ(r.outcome, Outcome::kFound);
  const Solution s = solution_of(h.problem, r);
  EXPECT_FALSE(find_violation(h.problem, s));
  EXPECT_LE(s.arena_bytes, h.capacity);
}

// The true holes of a generated slack instance among the candidates (with others): the
// packing places it, checked by the validator.
TEST(AllocatePerfectPacking, PlacesASlackInstanceWithItsTrueHolesAmongOthers) {
  const SlackInstance h = generate_slack_instance(1007, 260, 21, CutStyle::kBrick);
  std::vector<Buffer> holes = h.removed;
  for (Buffer& hole : holes) hole.fixed_offset.reset();
  const std::optional<Problem> swept = with_slack_fillers(h.problem, h.capacity, FillerShape{.seed = 1});
  ASSERT_TRUE(swept.has_value());
  holes.insert(holes.end(), swept->buffers.begin() + static_cast<std::ptrdiff_t>(h.problem.buffers.size()),
               swept->buffers.end());
  const PerfectPackingResult r = find_packing_with_holes(h.problem, holes, h.capacity, far_away(), {}, 2'000'000);
  ASSERT_EQ(r.outcome, Outcome::kFound);
  const Solution s = solution_of(h.problem, r);
  EXPECT_FALSE(find_violation(h.problem, s));
  EXPECT_LE(s.arena_bytes, h.capacity);
}

TEST(AllocateExact, OptimumAboveTheLowerBoundIsFoundAndProven) {
  int above = 0;
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    int64_t capacity = 0;
    const Problem p = random_tight_problem(seed, capacity);
    const int64_t optimum = brute_force_optimum(p, 4 * capacity);
    if (optimum == capacity) continue;
    ++above;
    SCOPED_TRACE(seed);
    const Solution greedy = plan_greedy(p);
    const Solution s = plan_exact(p, {.time_budget_seconds = 60}, &greedy).solution;
    testing::expect_valid_plan(p, s);
    EXPECT_LE(s.arena_bytes, greedy.arena_bytes);
    EXPECT_EQ(s.arena_bytes, optimum);
    EXPECT_TRUE(s.optimal);
  }
  EXPECT_GT(above, 3);
}

TEST(AllocateExact, ReportsProgress) {
  const HardInstance h = generate_hard_instance(3, 120, CutStyle::kBrick, 100'000);
  int calls = 0;
  ExactProgress last;
  ExactOptions options{.time_budget_seconds = 60};
  options.on_progress = [&](const ExactProgress& p) {
    ++calls;
    last = p;
  };
  const Solution s = plan_exact(h.problem, options).solution;
  testing::expect_valid_plan(h.problem, s);
  EXPECT_EQ(s.arena_bytes, h.optimum);
  EXPECT_GE(calls, 1);
  EXPECT_EQ(last.best_arena, h.optimum);
  EXPECT_EQ(last.lower_bound, h.optimum);
  EXPECT_EQ(last.budget_seconds, 60);
}

}  // namespace
}  // namespace memledger::allocate
