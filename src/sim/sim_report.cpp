#include "memledger/sim/sim_report.h"
#include "core/json_text.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "memledger/core/shape.h"

namespace memledger::sim {
namespace {

std::string tile_text(const OperatorSim& s) {
  std::string splits;
  for (size_t a = 0; a < s.splits.size(); ++a)
    if (s.splits[a] > 1) splits += fmt::format("{}{} {}", splits.empty() ? "" : ", ", s.grid_axes[a], s.splits[a]);
  return fmt::format("{} tile{} of {}{}", s.tiles, s.tiles == 1 ? "" : "s", shape_to_string(s.tile_extents),
                     splits.empty() ? "" : " (" + splits + ")");
}

std::string traffic_text(const Traffic& t) {
  return fmt::format("{} B in {} transfer{}, {:.0f} cycles", t.bytes, t.transfers, t.transfers == 1 ? "" : "s",
                     t.cycles);
}

double ratio(double value, double reference) { return reference == 0 ? 1.0 : value / reference; }

nlohmann::json traffic_json(const Traffic& t) {
  return {{"bytes", t.bytes}, {"payload_bytes", t.payload_bytes}, {"transfers", t.transfers}, {"cycles", t.cycles}};
}

}  // namespace

std::string sim_report_text(const SimReport& r) {
  const DeviceProfile& d = r.device;
  std::string out = fmt::format(
      "NPU mode: device '{}', local memory {} B, external memory {} B\n"
      "  DMA: {} B granularity, {} setup cycles per transfer, {} B/cycle, double buffering {}; parameters: {}; "
      "kernel workspace {}\n",
      d.name, d.capacity_bytes, d.dma.external_bytes, d.dma.granularity_bytes, d.dma.setup_cycles,
      d.dma.bytes_per_cycle, d.dma.double_buffering ? "on" : "off", to_string(r.options.parameters),
      r.options.kernel_workspace ? "per tile" : "none");
  for (size_t i = 0; i < r.operators.size(); ++i) {
    const OperatorSim& s = r.operators[i];
    const Traffic total = s.total();
    out += fmt::format("\n[{}] {} ({}, {}{}): {}, {}\n", i, s.node, s.op, s.model, s.generic ? " rule" : "",
                       tile_text(s), s.loop_order);
    if (!s.note.empty()) out += fmt::format("    note: {}\n", s.note);
    out += fmt::format("    local peak {} B of {} B{}{}\n", s.local_peak_bytes, d.capacity_bytes,
                       s.fits ? "" : "  DOES NOT FIT",
                       s.workspace_bytes ? fmt::format(" (workspace {} B per tile)", s.workspace_bytes) : "");
    for (const TensorTraffic& t : s.tensors) {
      out += fmt::format("    {:5} {:<24} {:<18} {:>9} B  tile {:>7} B{}  {} × → {}{}\n",
                         t.kind == TensorKind::kOutput ? "store" : "load", t.name, to_string(t.kind), t.tensor_bytes,
                         t.tile_bytes, t.copies > 1 ? "×2" : "  ", t.moves, traffic_text(t.traffic),
                         t.in_place ? " (written over its input tile)" : "");
      if (t.moves > 1) out += fmt::format("          {:<24} moved {}\n", "", t.reuse);
    }
    out += fmt::format("    traffic {} (ideal {} B, {:.0f} cycles): ×{:.3f} bytes, ×{:.3f} cycles\n",
                       traffic_text(total), s.ideal.bytes, s.ideal.cycles,
                       ratio(static_cast<double>(total.bytes), static_cast<double>(s.ideal.bytes)),
                       ratio(total.cycles, s.ideal.cycles));
  }
  const Traffic total = r.total();
  out += fmt::format("\ntotal: loaded {}; stored {}\n", traffic_text(r.load), traffic_text(r.store));
  out += fmt::format("  ideal (every byte moved once): {} B, {:.0f} cycles\n", r.ideal.bytes, r.ideal.cycles);
  out += fmt::format("  traffic ratio ×{:.3f} bytes, ×{:.3f} cycles ({} B, {:.0f} cycles)\n", r.bytes_ratio(),
                     r.cycles_ratio(), total.bytes, total.cycles);
  out += fmt::format(
      "  parameters: compact {} B moved (stored {} B), expanded {} B moved (stored {} B), weights {} B "
      "moved (stored {} B)\n",
      r.compact_parameters.bytes, r.compact_parameter_ideal_bytes, r.expanded_parameters.bytes,
      r.expanded_parameter_ideal_bytes, r.weights.bytes, r.weight_ideal_bytes);
  out += fmt::format("  local peak {} B at '{}' ({} {} B)\n", r.local_peak_bytes, r.local_peak_node,
                     r.fits_local ? "fits" : "does NOT fit", d.capacity_bytes);
  out += fmt::format("  external memory: {} B needed by the whole-tensor plan ({} {} B)\n", r.external_bytes_needed,
                     r.fits_external ? "fits" : "does NOT fit", d.dma.external_bytes);
  if (r.generic_operators > 0) {
    std::string names;
    for (const OperatorSim& s : r.operators)
      if (s.generic) names += (names.empty() ? "" : ", ") + s.node;
    out += fmt::format("  {} operator{} priced by the conservative generic rule: {}\n", r.generic_operators,
                       r.generic_operators == 1 ? "" : "s", names);
  }
  return out;
}

std::string sim_report_json(const SimReport& r) {
  nlohmann::json ops = nlohmann::json::array();
  for (const OperatorSim& s : r.operators) {
    nlohmann::json tensors = nlohmann::json::array();
    for (const TensorTraffic& t : s.tensors)
      tensors.push_back({{"name", t.name},
                         {"kind", std::string(to_string(t.kind))},
                         {"direction", t.kind == TensorKind::kOutput ? "store" : "load"},
                         {"tensor_bytes", t.tensor_bytes},
                         {"tile_bytes", t.tile_bytes},
                         {"copies", t.copies},
                         {"moves", t.moves},
                         {"reuse", t.reuse},
                         {"in_place", t.in_place},
                         {"traffic", traffic_json(t.traffic)}});
    nlohmann::json buffers = nlohmann::json::array();
    for (size_t b = 0; b < s.local.buffers.size(); ++b)
      buffers.push_back(
          {{"name", s.local.buffers[b].id}, {"bytes", s.local.buffers[b].size}, {"offset", s.local_plan.offsets[b]}});
    const Traffic total = s.total();
    ops.push_back({{"node", s.node},
                   {"op", s.op},
                   {"model", s.model},
                   {"generic", s.generic},
                   {"note", s.note},
                   {"grid_axes", s.grid_axes},
                   {"grid_extents", s.grid_extents},
                   {"tile_extents", s.tile_extents},
                   {"splits", s.splits},
                   {"tiles", s.tiles},
                   {"loop_order", s.loop_order},
                   {"workspace_bytes", s.workspace_bytes},
                   {"local_peak_bytes", s.local_peak_bytes},
                   {"fits", s.fits},
                   {"local_buffers", buffers},
                   {"tensors", tensors},
                   {"load", traffic_json(s.load)},
                   {"store", traffic_json(s.store)},
                   {"ideal", traffic_json(s.ideal)},
                   {"bytes_ratio", ratio(static_cast<double>(total.bytes), static_cast<double>(s.ideal.bytes))},
                   {"cycles_ratio", ratio(total.cycles, s.ideal.cycles)}});
  }
  const DeviceProfile& d = r.device;
  nlohmann::json j{{"device",
                    {{"name", d.name},
                     {"local_bytes", d.capacity_bytes},
                     {"external_bytes", d.dma.external_bytes},
                     {"granularity_bytes", d.dma.granularity_bytes},
                     {"setup_cycles", d.dma.setup_cycles},
                     {"bytes_per_cycle", d.dma.bytes_per_cycle},
                     {"double_buffering", d.dma.double_buffering}}},
                   {"parameters", std::string(to_string(r.options.parameters))},
                   {"kernel_workspace", r.options.kernel_workspace},
                   {"load", traffic_json(r.load)},
                   {"store", traffic_json(r.store)},
                   {"ideal", traffic_json(r.ideal)},
                   {"bytes_ratio", r.bytes_ratio()},
                   {"cycles_ratio", r.cycles_ratio()},
                   {"parameter_traffic",
                    {{"compact", traffic_json(r.compact_parameters)},
                     {"compact_stored_bytes", r.compact_parameter_ideal_bytes},
                     {"expanded", traffic_json(r.expanded_parameters)},
                     {"expanded_stored_bytes", r.expanded_parameter_ideal_bytes},
                     {"weights", traffic_json(r.weights)},
                     {"weights_stored_bytes", r.weight_ideal_bytes}}},
                   {"local_peak_bytes", r.local_peak_bytes},
                   {"local_peak_node", r.local_peak_node},
                   {"external_bytes_needed", r.external_bytes_needed},
                   {"fits_local", r.fits_local},
                   {"fits_external", r.fits_external},
                   {"generic_operators", r.generic_operators},
                   {"operators", ops}};
  return json_text(j);
}

}  // namespace memledger::sim
