#include "memledger/plan/banked_plan.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "memledger/core/error.h"

namespace memledger {
namespace {

unsigned kind_of(BufferCategory category) {
  switch (category) {
    case BufferCategory::kInput:
      return kHoldsInputs;
    case BufferCategory::kConstant:
      return kHoldsConstants;
    case BufferCategory::kWorkspace:
      return kHoldsWorkspaces;
    case BufferCategory::kOutput:
    case BufferCategory::kActivation:
    case BufferCategory::kPersistent:  // a variable (SVDF state): read and written like an activation
      break;
  }
  return kHoldsActivations;
}

// Bytes each buffer is read and written over the program, gathered at its storage root.
std::vector<int64_t> accessed_bytes(const Graph& graph, const Liveness& live) {
  std::unordered_map<ValueId, int64_t> reads;
  for (NodeId id : live.schedule)
    for (ValueId v : graph.node(id).inputs)
      if (v.valid()) ++reads[v];
  std::vector<int64_t> accessed(live.buffers.size(), 0);
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    int64_t times = 0;
    if (b.category == BufferCategory::kWorkspace) {
      times = 2;
    } else {
      const auto it = reads.find(b.value);
      times = (it == reads.end() ? 0 : it->second) + (b.category == BufferCategory::kConstant ? 0 : 1);
    }
    accessed[static_cast<size_t>(live.storage_of(static_cast<int>(i)))] += times * b.physical_bytes;
  }
  return accessed;
}

}  // namespace

MemoryPlan plan_memory_banked(const Graph& graph, const DeviceProfile& profile, const PlanOptions& options,
                              const PlacementOptions& placement) {
  ML_CHECK(!profile.banks.empty(), "profile '{}' has no banks", profile.name);
  MemoryPlan plan;
  plan.liveness = compute_liveness(graph, profile, options);
  plan.ledger = make_ledger(graph, plan.liveness);
  const Liveness& live = plan.liveness;
  const auto intervals = live.storage_intervals();
  const std::vector<int64_t> accessed = accessed_bytes(graph, live);

  allocate::BankedProblem problem;
  for (const MemoryBank& b : profile.banks)
    problem.banks.push_back(
        {.name = b.name, .capacity = b.capacity_bytes, .alignment = b.alignment_bytes, .access_cost = b.access_cost});
  std::vector<int> buffer_of_entry;
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    if (b.alias_of) continue;
    const unsigned kind = kind_of(b.category);
    // External constants are read in place from read-only memory; everything else that is
    // placed lives in memory the program writes.
    const bool in_place_constant = b.external && b.category == BufferCategory::kConstant;
    if (b.external && !in_place_constant) continue;
    allocate::BankedBuffer entry{.buffer = {.id = b.name,
                                            .size = b.physical_bytes,
                                            .lower = in_place_constant ? 0 : intervals[i].first,
                                            .upper = in_place_constant ? live.steps() : intervals[i].second + 1},
                                 .accessed_bytes = accessed[i]};
    for (size_t k = 0; k < profile.banks.size(); ++k) {
      const MemoryBank& bank = profile.banks[k];
      if ((bank.holds & kind) != 0 && bank.read_only == in_place_constant) entry.allowed.push_back(static_cast<int>(k));
    }
    if (entry.allowed.empty()) {
      if (in_place_constant) continue;  // no flash bank in the map: outside it, as without banks
      fail("buffer '{}' ({}) may live in no bank of device '{}': no writable bank holds {}", b.name,
           to_string(b.category), profile.name, holds_to_string(kind));
    }
    problem.buffers.push_back(std::move(entry));
    buffer_of_entry.push_back(static_cast<int>(i));
  }

  BankedPlacement banked{
      .banks = profile.banks,
      .bank_of = std::vector<int>(live.buffers.size(), -1),
      .solution = allocate::plan_banked(
          problem, {.algorithm = placement.algorithm, .time_budget_seconds = placement.time_budget_seconds})};
  const allocate::BankedSolution& s = banked.solution;
  plan.offsets.assign(live.buffers.size(), -1);
  for (size_t e = 0; e < buffer_of_entry.size(); ++e) {
    plan.offsets[static_cast<size_t>(buffer_of_entry[e])] = s.offsets[e];
    banked.bank_of[static_cast<size_t>(buffer_of_entry[e])] = s.bank[e];
  }
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    if (!live.buffers[i].alias_of) continue;
    const auto root = static_cast<size_t>(live.storage_of(static_cast<int>(i)));
    plan.offsets[i] = plan.offsets[root];
    banked.bank_of[i] = banked.bank_of[root];
  }
  plan.optimal = true;
  for (size_t k = 0; k < s.banks.size(); ++k) {
    plan.arena_bytes += s.banks[k].solution.arena_bytes;
    plan.lower_bound_bytes += s.banks[k].lower_bound_bytes;
    plan.capacity_bytes += profile.banks[k].capacity_bytes;
    plan.optimal = plan.optimal &&
                   (s.banks[k].solution.optimal || s.banks[k].solution.arena_bytes == s.banks[k].lower_bound_bytes);
  }
  plan.fits = s.fits;
  plan.algorithm = s.method;
  plan.banked = std::move(banked);
  return plan;
}

MemoryPlan banks_end_to_end(MemoryPlan plan, int64_t gap_bytes) {
  if (!plan.banked) return plan;
  const BankedPlacement& banked = *plan.banked;
  int64_t alignment = 1;
  for (const MemoryBank& b : banked.banks) alignment = std::max(alignment, b.alignment_bytes);
  std::vector<int64_t> base(banked.banks.size(), -1);
  int64_t end = 0;
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    if (banked.banks[k].read_only) continue;
    const int64_t from = end > 0 ? end + gap_bytes : 0;
    base[k] = (from + alignment - 1) / alignment * alignment;
    end = base[k] + banked.solution.banks[k].solution.arena_bytes;
  }
  for (size_t i = 0; i < plan.offsets.size(); ++i) {
    const int bank = banked.bank_of[i];
    plan.offsets[i] = bank < 0 || base[static_cast<size_t>(bank)] < 0 || plan.liveness.buffers[i].external
                          ? -1
                          : base[static_cast<size_t>(bank)] + plan.offsets[i];
  }
  plan.arena_bytes = end;
  plan.capacity_bytes = 0;
  plan.fits = true;
  plan.banked.reset();
  return plan;
}

SlowTraffic slow_bank_traffic(const MemoryPlan& plan) {
  SlowTraffic out;
  if (!plan.banked) return out;
  const std::vector<MemoryBank>& banks = plan.banked->banks;
  double fastest = std::numeric_limits<double>::infinity();
  for (const MemoryBank& b : banks)
    if (!b.read_only && (b.holds & kHoldsActivations) != 0) fastest = std::min(fastest, b.access_cost);
  for (size_t k = 0; k < banks.size(); ++k) {
    if (banks[k].read_only || !(banks[k].access_cost > fastest)) continue;
    const int64_t accessed = plan.banked->solution.banks.at(k).accessed_bytes;
    out.bytes += accessed;
    out.cycles += static_cast<double>(accessed) * (banks[k].access_cost - fastest);
  }
  return out;
}

}  // namespace memledger
