#include "memledger/plan/liveness.h"

#include <algorithm>
#include <optional>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/device/tensor_layout.h"
#include "memledger/ir/integer_node.h"
#include "memledger/ir/verifier.h"

namespace memledger {

std::string_view to_string(BufferCategory category) {
  switch (category) {
    case BufferCategory::kInput:
      return "input";
    case BufferCategory::kOutput:
      return "output";
    case BufferCategory::kActivation:
      return "activation";
    case BufferCategory::kConstant:
      return "constant";
    case BufferCategory::kWorkspace:
      return "workspace";
    case BufferCategory::kPersistent:
      return "persistent";
  }
  return "?";
}

int Liveness::storage_of(int buffer) const {
  if (roots.size() == buffers.size()) return roots[static_cast<size_t>(buffer)];
  while (buffers[static_cast<size_t>(buffer)].alias_of) buffer = *buffers[static_cast<size_t>(buffer)].alias_of;
  return buffer;
}

int64_t Liveness::declared_workspace_bytes() const {
  int64_t total = 0;
  for (const KernelContract& c : contracts) total = checked_add(total, c.workspace_bytes, "declared workspace");
  return total;
}

std::vector<std::pair<int, int>> Liveness::storage_intervals() const {
  std::vector<std::pair<int, int>> intervals(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) intervals[i] = {buffers[i].first_step, buffers[i].last_step};
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (!buffers[i].alias_of) continue;
    auto& root = intervals[static_cast<size_t>(storage_of(static_cast<int>(i)))];
    root = {std::min(root.first, buffers[i].first_step), std::max(root.second, buffers[i].last_step)};
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].alias_of) intervals[i] = intervals[static_cast<size_t>(storage_of(static_cast<int>(i)))];
  return intervals;
}

Liveness compute_liveness(const Graph& graph, const DeviceProfile& given_profile, const PlanOptions& options) {
  verify_graph(graph);
  // A quantized model states its own storage (DESIGN.md §11): a profile's `storage` dtype
  // applies to float models only, so the int8 plan of an int8 model is its real bytes.
  std::optional<DeviceProfile> own_dtypes;
  if (given_profile.storage && is_quantized_model(graph)) {
    own_dtypes = given_profile;
    own_dtypes->storage.reset();
  }
  const DeviceProfile& profile = own_dtypes ? *own_dtypes : given_profile;
  Liveness live;
  live.schedule = graph.order();
  const int steps = live.steps();
  const int last_step = std::max(steps - 1, 0);

  // First and last step each value is read, from one pass over the schedule.
  std::vector<int> first_use(graph.value_count(), -1), last_use(graph.value_count(), -1);
  for (int step = 0; step < steps; ++step)
    for (ValueId in : graph.node(live.schedule[static_cast<size_t>(step)]).inputs) {
      if (!in.valid()) continue;
      const auto i = static_cast<size_t>(in.index);
      if (first_use[i] < 0) first_use[i] = step;
      last_use[i] = step;
    }

  std::vector<int> buffer_of(graph.value_count(), -1);
  std::vector<int> storage_last;  // per buffer: the last step its storage is used, aliases included
  auto add_value_buffer = [&](ValueId id, BufferCategory category, int first, int last, bool external = false) {
    const Value& v = graph.value(id);
    const Layout layout = tensor_layout(profile, v.shape, v.dtype, v.roles);
    buffer_of[static_cast<size_t>(id.index)] = static_cast<int>(live.buffers.size());
    live.buffers.push_back({.name = v.name,
                            .category = category,
                            .value = id,
                            .logical_bytes = layout.logical_bytes(),
                            .physical_bytes = layout.bytes(),
                            .first_step = first,
                            .last_step = std::max(first, last),
                            .external = external});
    storage_last.push_back(std::max(first, last));
    live.roots.push_back(static_cast<int>(live.buffers.size()) - 1);
  };
  auto last_of = [&](ValueId id, int produced) {
    if (graph.is_graph_output(id)) return last_step;
    return std::max(produced, last_use[static_cast<size_t>(id.index)]);
  };

  const bool external_inputs = profile.inputs == InputResidency::kExternal;
  for (ValueId in : graph.inputs()) add_value_buffer(in, BufferCategory::kInput, 0, last_of(in, 0), external_inputs);
  // Constants in order of first use, so the ledger reads in the order a device loads them.
  std::vector<ValueId> constants;
  for (size_t i = 0; i < graph.value_count(); ++i) {
    const ValueId id{static_cast<int32_t>(i)};
    if (graph.value(id).is_constant() && (first_use[i] >= 0 || graph.is_graph_output(id))) constants.push_back(id);
  }
  std::stable_sort(constants.begin(), constants.end(), [&](ValueId a, ValueId b) {
    return first_use[static_cast<size_t>(a.index)] < first_use[static_cast<size_t>(b.index)];
  });
  const bool external_constants = profile.constants == ConstantResidency::kExternal;
  // Persistent values: the state inputs of operators that carry a state (SVDF), by their
  // records; their constant holds the initial state.
  std::vector<char> persistent(graph.value_count(), 0);
  for (NodeId n : live.schedule) {
    const Node& node = graph.node(n);
    const OpRecord* record = find_op(node, graph.opset);
    if (!record || record->state_input < 0 || static_cast<size_t>(record->state_input) >= node.inputs.size()) continue;
    const ValueId state = node.inputs[static_cast<size_t>(record->state_input)];
    if (state.valid() && graph.value(state).is_constant()) persistent[static_cast<size_t>(state.index)] = 1;
  }
  for (ValueId c : constants) {
    if (persistent[static_cast<size_t>(c.index)]) {
      add_value_buffer(c, BufferCategory::kPersistent, 0, last_step);
      continue;
    }
    const bool resident = profile.constants == ConstantResidency::kResident || graph.is_graph_output(c);
    const int first = resident ? 0 : first_use[static_cast<size_t>(c.index)];
    add_value_buffer(c, BufferCategory::kConstant, first, resident ? last_step : last_use[static_cast<size_t>(c.index)],
                     external_constants);
  }

  for (int step = 0; step < steps; ++step) {
    const NodeId n = live.schedule[static_cast<size_t>(step)];
    const Node& node = graph.node(n);
    const KernelContract contract =
        options.contracts ? options.contracts(graph, n, profile) : op_contract(graph, n, profile);
    live.contracts.push_back(contract);
    for (ValueId out : node.outputs) {
      const BufferCategory category =
          graph.is_graph_output(out) ? BufferCategory::kOutput : BufferCategory::kActivation;
      add_value_buffer(out, category, step, last_of(out, step));
    }
    if (contract.workspace_bytes > 0)
      live.buffers.push_back({.name = node.name.empty() ? node.op + ".workspace" : node.name + ".workspace",
                              .category = BufferCategory::kWorkspace,
                              .node = n,
                              .logical_bytes = contract.workspace_bytes,
                              .physical_bytes = contract.workspace_bytes,
                              .first_step = step,
                              .last_step = step});
    if (contract.workspace_bytes > 0) {
      storage_last.push_back(step);
      live.roots.push_back(static_cast<int>(live.buffers.size()) - 1);
    }

    // A state output is written over its persistent state input (SVDF), in-place or not:
    // it is what the operator does, not a saving the planner may choose.
    const OpRecord* record = find_op(node, graph.opset);
    if (record && record->state_input >= 0 && static_cast<size_t>(record->state_input) < node.inputs.size() &&
        static_cast<size_t>(record->state_output) < node.outputs.size()) {
      const ValueId state = node.inputs[static_cast<size_t>(record->state_input)];
      const ValueId next = node.outputs[static_cast<size_t>(record->state_output)];
      if (state.valid() && next.valid() && persistent[static_cast<size_t>(state.index)] &&
          !graph.is_graph_output(next)) {
        const int root = buffer_of[static_cast<size_t>(state.index)];
        const int out = buffer_of[static_cast<size_t>(next.index)];
        if (live.buffers[static_cast<size_t>(out)].physical_bytes <=
            live.buffers[static_cast<size_t>(root)].physical_bytes) {
          live.buffers[static_cast<size_t>(out)].alias_of = root;
          live.roots[static_cast<size_t>(out)] = live.roots[static_cast<size_t>(root)];
        }
      }
    }

    if (!options.in_place || node.outputs.size() != 1) continue;
    const int out_buffer = buffer_of[static_cast<size_t>(node.outputs[0].index)];
    for (int input_index : contract.overwritable_inputs) {
      const ValueId in = node.inputs.at(static_cast<size_t>(input_index));
      const Value& v = graph.value(in);
      if (v.is_constant() || graph.is_graph_output(in)) continue;
      if (graph.is_graph_input(in) && (!options.donate_inputs || external_inputs)) continue;
      if (last_use[static_cast<size_t>(in.index)] != step) continue;  // a later reader still needs it
      const int root = live.storage_of(buffer_of[static_cast<size_t>(in.index)]);
      if (storage_last[static_cast<size_t>(root)] > step) continue;  // another alias of it lives on
      if (live.buffers[static_cast<size_t>(out_buffer)].physical_bytes >
          live.buffers[static_cast<size_t>(root)].physical_bytes)
        continue;
      live.buffers[static_cast<size_t>(out_buffer)].alias_of = buffer_of[static_cast<size_t>(in.index)];
      live.roots[static_cast<size_t>(out_buffer)] = root;
      storage_last[static_cast<size_t>(root)] = live.buffers[static_cast<size_t>(out_buffer)].last_step;
      break;
    }
  }
  return live;
}

}  // namespace memledger
