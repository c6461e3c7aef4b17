#include "memledger/plan/allocate/stacks.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "memledger/plan/allocate/relays.h"

namespace memledger::allocate {
namespace {

// `outer` joined over the blocks of `inner` (outer.block_of indexes inner.joined's buffers).
Blocks compose(const Blocks& inner, Blocks outer) {
  Blocks out{.joined = std::move(outer.joined), .joins = inner.joins + outer.joins};
  out.block_of.resize(inner.block_of.size());
  out.offset_in_block.resize(inner.block_of.size());
  for (size_t i = 0; i < inner.block_of.size(); ++i) {
    const size_t middle = inner.block_of[i];
    out.block_of[i] = outer.block_of[middle];
    out.offset_in_block[i] = outer.offset_in_block[middle] + inner.offset_in_block[i];
  }
  return out;
}

Blocks as_blocks(Relays relays) {
  Blocks out{.joined = std::move(relays.joined), .block_of = std::move(relays.run_of), .joins = relays.joined_pairs};
  out.offset_in_block.assign(out.block_of.size(), 0);
  return out;
}

}  // namespace

Blocks join_stacks(const Problem& problem, size_t most) {
  const std::vector<Buffer>& buffers = problem.buffers;
  using Lifetime = std::tuple<int64_t, int64_t, int64_t>;  // lower, upper, alignment
  std::map<Lifetime, std::vector<size_t>> sharing;
  std::map<std::pair<int64_t, int64_t>, size_t> live_so;  // every buffer of a lifetime, joinable or not
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    ++live_so[{b.lower, b.upper}];
    if (b.size > 0 && !b.fixed_offset) sharing[{b.lower, b.upper, b.alignment}].push_back(i);
  }
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> stack_of(buffers.size(), kNone);  // per buffer: its stack in `stacks`
  std::vector<std::vector<size_t>> stacks;              // bottom first
  Blocks blocks;
  for (auto& [lifetime, group] : sharing) {
    const int64_t lower = std::get<0>(lifetime), upper = std::get<1>(lifetime), alignment = std::get<2>(lifetime);
    if (group.size() < 2 || group.size() > most || live_so.at({lower, upper}) != group.size()) continue;
    // Each one's end must be an offset the next may take: those whose sizes keep the alignment go
    // below, and at most one that does not, on top.
    std::stable_partition(group.begin(), group.end(), [&](size_t i) { return buffers[i].size % alignment == 0; });
    if (buffers[group[group.size() - 2]].size % alignment != 0) continue;
    for (const size_t i : group) stack_of[i] = stacks.size();
    stacks.push_back(group);
    blocks.joins += static_cast<int64_t>(group.size()) - 1;
  }
  blocks.block_of.assign(buffers.size(), kNone);
  blocks.offset_in_block.assign(buffers.size(), 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const size_t index = blocks.joined.buffers.size();
    if (stack_of[i] == kNone) {
      blocks.block_of[i] = index;
      blocks.joined.buffers.push_back(buffers[i]);
      continue;
    }
    const std::vector<size_t>& stack = stacks[stack_of[i]];
    if (stack.front() != i) continue;  // joined with the stack's bottom
    Buffer block = buffers[i];
    block.size = 0;
    for (const size_t k : stack) {
      blocks.block_of[k] = index;
      blocks.offset_in_block[k] = block.size;
      block.size += buffers[k].size;
    }
    blocks.joined.buffers.push_back(std::move(block));
  }
  return blocks;
}

Blocks join_relays_and_stacks(const Problem& problem, int rounds, size_t most) {
  Blocks blocks = as_blocks(join_relays(problem));
  for (int round = 0; round < rounds; ++round) {
    Blocks stacked = join_stacks(blocks.joined, most);
    if (stacked.joins == 0) break;
    blocks = compose(blocks, std::move(stacked));
    Blocks relayed = as_blocks(join_relays(blocks.joined));
    if (relayed.joins == 0) break;
    blocks = compose(blocks, std::move(relayed));
  }
  return blocks;
}

std::vector<int64_t> block_offsets(const Blocks& blocks, const std::vector<int64_t>& joined_offsets) {
  std::vector<int64_t> offsets(blocks.block_of.size());
  for (size_t i = 0; i < offsets.size(); ++i)
    offsets[i] = joined_offsets[blocks.block_of[i]] + blocks.offset_in_block[i];
  return offsets;
}

}  // namespace memledger::allocate
