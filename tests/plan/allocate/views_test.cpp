// Views: the problem reversed in time has the same placements (and steps at the ends of int64
// do not overflow); views_of lists the problem first and joined views that each join more than
// the next; a placement of any view maps back to one of the problem. And what the turns over the
// views buy: a guillotine cut with slack (slack bench seed 280019) that the earlier sequence of
// steps left unplaced within 2 s is placed in the reversed, joined view after its edge holes
// are taken, joined again and read again — and decide_within places it, after the same nodes
// whatever its budget.
#include "memledger/plan/allocate/views.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "memledger/plan/allocate/decision_search.h"
#include "memledger/plan/allocate/exact.h"
#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/greedy.h"
#include "memledger/plan/allocate/slack_fillers.h"
#include "plan/allocate/plan_checks.h"

namespace memledger::allocate {
namespace {

using testing::buffer;

// The slack bench's instance for a seed (20 per block, sized by the seed's place in its block).
SlackInstance bench_instance(uint64_t seed, CutStyle style) {
  const BenchSizes sizes = bench_sizes(static_cast<int64_t>(seed % 20), 20);
  return generate_slack_instance(seed, sizes.buffers, sizes.removed, style);
}

TEST(AllocateViews, ReversedInTimeHasTheSamePlacements) {
  Problem p;
  p.buffers = {buffer("a", 0, 3, 10), buffer("b", 3, 5, 10), buffer("c", 1, 4, 6), buffer("d", 4, 6, 2)};
  const Problem r = reversed_in_time(p);
  ASSERT_EQ(r.buffers.size(), p.buffers.size());
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    EXPECT_LT(r.buffers[i].lower, r.buffers[i].upper);
    EXPECT_EQ(r.buffers[i].upper - r.buffers[i].lower, p.buffers[i].upper - p.buffers[i].lower);
    EXPECT_EQ(r.buffers[i].size, p.buffers[i].size);
  }
  // a ends where b starts: reversed, b ends where a starts; c overlaps both either way.
  EXPECT_EQ(r.buffers[1].upper, r.buffers[0].lower);
  const Solution placed = plan_greedy(r);
  ASSERT_FALSE(find_violation(r, placed));
  testing::checked_plan(p, placed.offsets, "greedy on the reversed problem");
  // Two buffers that share no step stay apart in time: one offset for both is still valid.
  Problem apart;
  apart.buffers = {buffer("x", 0, 2, 4), buffer("y", 2, 4, 4)};
  testing::checked_plan(apart, {0, 0}, "apart");
  testing::checked_plan(reversed_in_time(apart), {0, 0}, "apart, reversed");
}

TEST(AllocateViews, ReversedInTimeDoesNotOverflowAtTheEndsOfInt64) {
  Problem p;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  p.buffers = {buffer("low", kMin, kMin + 2, 1), buffer("high", kMax - 2, kMax, 1), buffer("all", kMin, kMax, 1)};
  check_problem(p);
  const Problem r = reversed_in_time(p);
  check_problem(r);
  EXPECT_EQ(r.buffers[0].upper, kMax);
  EXPECT_EQ(r.buffers[1].lower, kMin);
  EXPECT_EQ(r.buffers[2].lower, kMin);
  EXPECT_EQ(r.buffers[2].upper, kMax);
}

TEST(AllocateViews, ListsTheProblemFirstAndEachJoinedViewWhereItJoinsMore) {
  const SlackInstance h = bench_instance(150012, CutStyle::kGuillotine);
  const std::vector<View> views = views_of(h.problem);
  ASSERT_GE(views.size(), 2u);
  EXPECT_EQ(views[0].kind, ViewKind::kAsGiven);
  EXPECT_EQ(views[0].blocks.joins, 0);
  ASSERT_EQ(views[0].blocks.joined.buffers.size(), h.problem.buffers.size());
  int64_t before = std::numeric_limits<int64_t>::max();
  bool reversed_seen = false;
  for (size_t v = 1; v < views.size(); ++v) {
    const View& view = views[v];
    EXPECT_GT(view.blocks.joins, 0) << v;
    if (view.kind == ViewKind::kReversedEveryStack) {
      reversed_seen = true;
      continue;
    }
    EXPECT_FALSE(reversed_seen) << "the forward views come first";
    EXPECT_LT(view.blocks.joins, before) << v;
    before = view.blocks.joins;
  }
  EXPECT_TRUE(reversed_seen);
  // Any placement of any view, mapped back, is one of the problem: greedy on each view.
  for (const View& view : views) {
    const Solution placed = plan_greedy(view.blocks.joined);
    testing::checked_plan(h.problem, block_offsets(view.blocks, placed.offsets), "greedy on a view");
  }
}

// Guillotine 280019: the reversed problem with relays and every stack joined, its edge holes
// (read as given) taken as buffers, joined again and its edge holes read again, is placed by
// the decision search within 200 000 nodes; the placement maps back to one of the problem
// within the capacity.
TEST(AllocateViews, AViewJoinedAgainAfterItsEdgeHolesPlacesAGuillotineCut) {
  const SlackInstance h = bench_instance(280019, CutStyle::kGuillotine);
  const std::vector<View> views = views_of(h.problem);
  const auto reversed =
      std::find_if(views.begin(), views.end(), [](const View& v) { return v.kind == ViewKind::kReversedEveryStack; });
  ASSERT_NE(reversed, views.end());
  const Problem& seen = reversed->blocks.joined;
  const EdgeHoles edge = with_edge_holes(seen, h.capacity, slack_hole_candidates(seen, h.capacity), 3);
  ASSERT_GT(edge.problem.buffers.size(), seen.buffers.size());
  const Blocks again = join_relays_and_stacks(edge.problem, 3, edge.problem.buffers.size());
  ASSERT_GT(again.joins, 0);
  const EdgeHoles deeper =
      with_edge_holes(again.joined, h.capacity, slack_hole_candidates(again.joined, h.capacity), 3);
  ASSERT_GT(deeper.problem.buffers.size(), again.joined.buffers.size());
  DecisionResult found = decide_placement(deeper.problem, h.capacity,
                                          std::chrono::steady_clock::now() + std::chrono::seconds(60), {}, 200'000);
  ASSERT_EQ(found.outcome, DecisionResult::Outcome::kFound);
  found.offsets.resize(again.joined.buffers.size());
  std::vector<int64_t> offsets = block_offsets(again, found.offsets);
  offsets.resize(seen.buffers.size());
  const Solution placed =
      testing::checked_plan(h.problem, block_offsets(reversed->blocks, offsets), "deep view of guillotine 280019");
  EXPECT_LE(placed.arena_bytes, h.capacity);

  const PlacementDecision decided = decide_within(h.problem, h.capacity, 60.0);
  ASSERT_TRUE(decided.solution.has_value());
  EXPECT_EQ(decided.outcome, DecisionResult::Outcome::kFound);
  testing::checked_plan(h.problem, decided.solution->offsets, "decide_within");
  EXPECT_LE(decided.solution->arena_bytes, h.capacity);
  // The turns depend on node counts only: a budget three times as long finds the same placement
  // after the same nodes.
  const PlacementDecision longer = decide_within(h.problem, h.capacity, 180.0);
  ASSERT_TRUE(longer.solution.has_value());
  EXPECT_EQ(longer.nodes, decided.nodes);
  EXPECT_EQ(longer.solution->offsets, decided.solution->offsets);
}

}  // namespace
}  // namespace memledger::allocate
