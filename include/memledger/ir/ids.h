// Typed ids for the graph's values and nodes: an index that cannot be mixed up with the
// other kind or with a plain integer.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace memledger {

template <typename Tag>
struct Id {
  int32_t index = -1;
  constexpr bool valid() const { return index >= 0; }
  constexpr auto operator<=>(const Id&) const = default;
};

using ValueId = Id<struct ValueTag>;
using NodeId = Id<struct NodeTag>;

}  // namespace memledger

template <typename Tag>
struct std::hash<memledger::Id<Tag>> {
  size_t operator()(memledger::Id<Tag> id) const noexcept { return std::hash<int32_t>()(id.index); }
};
