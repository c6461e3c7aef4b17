// Relays: hand-overs of one size joined into runs (checked by hand: ambiguous steps, fixed
// offsets, sizes 0 and differing alignments left apart, offsets mapped back), the premise
// checked on generated cuts (every joined run lies at one offset of the known placement),
// and what it buys: a tight guillotine cut the perfect-packing search does not place in
// millions of nodes is placed at once joined, and decide_within places it; where the joined
// problem has no placement, decide_within places the problem as given.
#include "memledger/plan/allocate/relays.h"

#include <gtest/gtest.h>

#include <chrono>
#include <tuple>
#include <vector>

#include "memledger/plan/allocate/exact.h"
#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "memledger/plan/allocate/perfect_packing.h"
#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::buffer;

std::tuple<int64_t, int64_t, int64_t> shape(const Buffer& b) { return {b.lower, b.upper, b.size}; }

// a [0,2) × 10 hands over to b [2,4) × 10, which hands over to c [4,6) × 10: one run [0,6) × 10
// under a's id; d [1,3) × 7 stays as it is.
TEST(AllocateRelays, JoinsHandOversOfOneSizeIntoRuns) {
  Problem p;
  p.buffers = {buffer("b", 2, 4, 10), buffer("d", 1, 3, 7), buffer("a", 0, 2, 10), buffer("c", 4, 6, 10)};
  const Relays relays = join_relays(p);
  EXPECT_EQ(relays.joined_pairs, 2);
  ASSERT_EQ(relays.joined.buffers.size(), 2u);
  ASSERT_EQ(relays.run_of.size(), 4u);
  EXPECT_EQ(relays.run_of[0], relays.run_of[2]);
  EXPECT_EQ(relays.run_of[3], relays.run_of[2]);
  EXPECT_NE(relays.run_of[1], relays.run_of[2]);
  const Buffer& run = relays.joined.buffers[relays.run_of[2]];
  EXPECT_EQ(run.id, "a");
  EXPECT_EQ(shape(run), std::tuple(int64_t{0}, int64_t{6}, int64_t{10}));
  EXPECT_EQ(shape(relays.joined.buffers[relays.run_of[1]]), shape(p.buffers[1]));
  // Offsets of the runs go back to every buffer of the run.
  std::vector<int64_t> joined_offsets(2);
  joined_offsets[relays.run_of[2]] = 7;
  joined_offsets[relays.run_of[1]] = 0;
  EXPECT_EQ(relay_offsets(relays, joined_offsets), (std::vector<int64_t>{7, 0, 7, 7}));
}

// Where two buffers of the size end (or start) at the step, which hands to which is unclear:
// none is joined. Nor are buffers with a fixed offset, of size 0, or of differing alignments.
TEST(AllocateRelays, LeavesUnclearHandOversApart) {
  Problem two_ending;
  two_ending.buffers = {buffer("a", 0, 2, 10), buffer("b", 1, 2, 10), buffer("c", 2, 3, 10)};
  EXPECT_EQ(join_relays(two_ending).joined_pairs, 0);
  EXPECT_EQ(join_relays(two_ending).joined.buffers.size(), 3u);
  Problem fixed;
  fixed.buffers = {buffer("a", 0, 2, 10), buffer("b", 2, 3, 10)};
  fixed.buffers[1].fixed_offset = 0;
  EXPECT_EQ(join_relays(fixed).joined_pairs, 0);
  Problem empty;
  empty.buffers = {buffer("a", 0, 2, 0), buffer("b", 2, 3, 0)};
  EXPECT_EQ(join_relays(empty).joined_pairs, 0);
  Problem aligned;
  aligned.buffers = {buffer("a", 0, 2, 64, 64), buffer("b", 2, 3, 64, 16)};
  EXPECT_EQ(join_relays(aligned).joined_pairs, 0);
  aligned.buffers[1].alignment = 64;
  EXPECT_EQ(join_relays(aligned).joined_pairs, 1);
  EXPECT_EQ(join_relays(aligned).joined.buffers[0].alignment, 64);
}

// The premise on generated cuts: every run lies at one offset of the cut's own placement (a
// hand-over of one size is one piece cut across time), for both cut styles; guillotine cuts
// have many (a sixth of their buffers and more).
TEST(AllocateRelays, RunsOfGeneratedCutsLieAtOneOffset) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    for (const CutStyle style : {CutStyle::kBrick, CutStyle::kGuillotine}) {
      const int64_t buffers = 150 + static_cast<int64_t>(seed) * 25;
      const SlackInstance h = generate_slack_instance(seed, buffers, 1 + static_cast<int64_t>(seed) % 10, style);
      const Relays relays = join_relays(h.problem);
      SCOPED_TRACE(::testing::Message() << "seed " << seed << (style == CutStyle::kBrick ? " brick" : " guillotine"));
      std::vector<int64_t> run_offset(relays.joined.buffers.size(), -1);
      for (size_t i = 0; i < h.problem.buffers.size(); ++i) {
        int64_t& at = run_offset[relays.run_of[i]];
        if (at < 0) at = h.witness[i];
        EXPECT_EQ(at, h.witness[i]) << h.problem.buffers[i].id;
      }
      if (style == CutStyle::kGuillotine) {
        EXPECT_GE(relays.joined_pairs * 6, buffers) << relays.joined_pairs;
      }
      // The witness, mapped from the runs back, is a placement of the problem within the capacity.
      Solution s{.offsets = relay_offsets(relays, run_offset), .algorithm = "witness"};
      s.arena_bytes = arena_bytes(h.problem, s.offsets);
      EXPECT_FALSE(find_violation(h.problem, s).has_value());
      EXPECT_LE(s.arena_bytes, h.capacity);
    }
  }
}

// Guillotine cut 5009 of the hard-instance bench (292 buffers, tight): the perfect-packing
// search did not place it in 15 s (71 million nodes); joined, it places at once, and
// decide_within gives a valid plan at the capacity.
TEST(AllocateRelays, JoinedRunsPlaceATightCutThePackingSearchDoesNot) {
  const HardInstance h = generate_hard_instance(5009, 292, CutStyle::kGuillotine);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  EXPECT_NE(find_perfect_packing(h.problem, h.optimum, deadline, {}, 2'000'000).outcome,
            PerfectPackingResult::Outcome::kFound);
  const Relays relays = join_relays(h.problem);
  EXPECT_GE(relays.joined_pairs, 40);
  const PerfectPackingResult joined = find_perfect_packing(relays.joined, h.optimum, deadline, {}, 200'000);
  ASSERT_EQ(joined.outcome, PerfectPackingResult::Outcome::kFound);
  const Solution s = testing::checked_plan(h.problem, relay_offsets(relays, joined.offsets), "relays");
  EXPECT_EQ(s.arena_bytes, h.optimum);
  const PlacementDecision decided = decide_within(h.problem, h.optimum, 60);
  ASSERT_TRUE(decided.solution.has_value());
  testing::expect_valid_plan(h.problem, *decided.solution);
  EXPECT_EQ(decided.solution->arena_bytes, h.optimum);
}

// Joining is a restriction: on this small tight problem (random_chain_problem seed 303, 11
// buffers, one hand-over) the joined problem has no placement at the peak, while the problem has
// one. decide_within falls back to the problem as given and places it; it never reports the
// joined problem's failure as the problem's.
TEST(AllocateRelays, WhereTheJoinedProblemHasNoPlacementTheProblemAsGivenDecides) {
  int64_t capacity = 0;
  const Problem p = testing::random_chain_problem(303, 7, capacity);
  const Relays relays = join_relays(p);
  ASSERT_EQ(relays.joined_pairs, 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  EXPECT_EQ(find_perfect_packing(relays.joined, capacity, deadline).outcome,
            PerfectPackingResult::Outcome::kInfeasible);
  EXPECT_EQ(find_perfect_packing(p, capacity, deadline).outcome, PerfectPackingResult::Outcome::kFound);
  const PlacementDecision decided = decide_within(p, capacity, 60);
  ASSERT_EQ(decided.outcome, DecisionResult::Outcome::kFound);
  ASSERT_TRUE(decided.solution.has_value());
  testing::expect_valid_plan(p, *decided.solution);
  EXPECT_EQ(decided.solution->arena_bytes, capacity);
}

}  // namespace
}  // namespace memledger::allocate
