// TFLite Micro's offline memory plan (its docs/memory_management.md): model metadata named
// "OfflineMemoryAllocation" whose buffer is int32 [version = 1, subgraph index, number of
// offsets, one offset per tensor of that subgraph] — bytes into the arena's non-persistent
// head, -1 where TFLite Micro plans the tensor itself (constants, variables, anything
// memledger leaves to it).
//
// Writing keeps every byte of the model: the original file goes unchanged behind a new
// root table (flatbuffer offsets only point forward, so a new Model table in front can
// refer to all of the old one's fields), which adds the metadata entry and its buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

inline constexpr std::string_view kOfflinePlanMetadata = "OfflineMemoryAllocation";

struct OfflinePlan {
  int32_t subgraph = 0;
  std::vector<int32_t> offsets;  // per tensor; -1: planned by TFLite Micro
};

// The model with `plan` as its OfflineMemoryAllocation (replacing one it had). The model
// must verify; `plan.offsets` must have one entry per tensor of the subgraph.
std::vector<uint8_t> write_offline_plan(std::span<const uint8_t> model, const OfflinePlan& plan,
                                        const std::string& source = "<memory>");

// The model's OfflineMemoryAllocation, nullopt when it has none; an Error naming the field
// when the metadata is malformed.
std::optional<OfflinePlan> read_offline_plan(std::span<const uint8_t> model, const std::string& source = "<memory>");

}  // namespace memledger
