#include "memledger/plan/allocate/views.h"

#include <algorithm>
#include <utility>

namespace memledger::allocate {
namespace {

Blocks as_given(const Problem& problem) {
  Blocks blocks{.joined = problem};
  blocks.block_of.resize(problem.buffers.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i) blocks.block_of[i] = i;
  blocks.offset_in_block.assign(problem.buffers.size(), 0);
  return blocks;
}

// The joined views of `problem`, in order, each where it joins more than the next.
void add_joined(const Problem& problem, std::vector<View>& views) {
  std::vector<View> joined;
  const std::pair<ViewKind, Blocks> forms[] = {
      {ViewKind::kEveryStack, join_relays_and_stacks(problem, kViewStackRounds, problem.buffers.size())},
      {ViewKind::kStacksOfTwo, join_relays_and_stacks(problem, kViewStackRounds)},
      {ViewKind::kRelays, join_relays_and_stacks(problem, 0)}};
  for (const auto& [kind, blocks] : forms) {
    if (blocks.joins > 0 && (joined.empty() || blocks.joins < joined.back().blocks.joins))
      joined.push_back({kind, blocks});
  }
  for (View& view : joined) views.push_back(std::move(view));
}

}  // namespace

Problem reversed_in_time(const Problem& problem) {
  Problem reversed = problem;
  for (Buffer& b : reversed.buffers) {
    // ~t = -t - 1: order-reversing and never overflowing, so lower < upper still holds.
    const int64_t lower = b.lower;
    b.lower = ~b.upper;
    b.upper = ~lower;
  }
  return reversed;
}

std::vector<View> views_of(const Problem& problem) {
  std::vector<View> views;
  views.push_back({ViewKind::kAsGiven, as_given(problem)});
  add_joined(problem, views);
  // Of the reversed problem's views, the one that joins most: run alone on the slack bench, the
  // reversed problem as given and its other joined views placed nothing within 0.6 s that the
  // forward views and this one did not.
  const Problem reversed = reversed_in_time(problem);
  Blocks every = join_relays_and_stacks(reversed, kViewStackRounds, reversed.buffers.size());
  if (every.joins > 0) views.push_back({ViewKind::kReversedEveryStack, std::move(every)});
  return views;
}

}  // namespace memledger::allocate
