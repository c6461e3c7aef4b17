#include "memledger/plan/allocate/stacks.h"

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

Blocks join_stacks(const Problem& problem) {
  const std::vector<Buffer>& buffers = problem.buffers;
  using Lifetime = std::tuple<int64_t, int64_t, int64_t>;  // lower, upper, alignment
  std::map<Lifetime, std::vector<size_t>> sharing;
  std::map<std::pair<int64_t, int64_t>, int> live_so;  // every buffer of a lifetime, joinable or not
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    ++live_so[{b.lower, b.upper}];
    if (b.size > 0 && !b.fixed_offset) sharing[{b.lower, b.upper, b.alignment}].push_back(i);
  }
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> above(buffers.size(), kNone);
  std::vector<bool> upper_of_pair(buffers.size(), false);
  Blocks blocks;
  for (const auto& [lifetime, pair] : sharing) {
    const auto& [lower, upper, alignment] = lifetime;
    if (pair.size() != 2 || live_so.at({lower, upper}) != 2) continue;
    // The lower one's end must be an offset the upper one may take.
    const bool first_below = buffers[pair[0]].size % alignment == 0;
    if (!first_below && buffers[pair[1]].size % alignment != 0) continue;
    const size_t below = first_below ? pair[0] : pair[1], on_top = first_below ? pair[1] : pair[0];
    above[below] = on_top;
    upper_of_pair[on_top] = true;
    ++blocks.joins;
  }
  blocks.block_of.assign(buffers.size(), kNone);
  blocks.offset_in_block.assign(buffers.size(), 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (upper_of_pair[i]) continue;
    const size_t index = blocks.joined.buffers.size();
    Buffer block = buffers[i];
    blocks.block_of[i] = index;
    if (above[i] != kNone) {
      blocks.block_of[above[i]] = index;
      blocks.offset_in_block[above[i]] = buffers[i].size;
      block.size += buffers[above[i]].size;
    }
    blocks.joined.buffers.push_back(std::move(block));
  }
  return blocks;
}

Blocks join_relays_and_stacks(const Problem& problem, int rounds) {
  Blocks blocks = as_blocks(join_relays(problem));
  for (int round = 0; round < rounds; ++round) {
    Blocks stacked = join_stacks(blocks.joined);
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
