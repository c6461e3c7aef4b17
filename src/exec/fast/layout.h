// Which activations the fast set keeps channels-last (NHWC) instead of the host profile's
// row-major NCHW. oneDNN's convolutions, pools and normalisations run on NHWC without a
// reorder, so a chain of fast nodes that passes its activations in NHWC spends no time
// converting between them (the reorders into and out of oneDNN's formats were most of the
// fast set's time on the mobile CNNs). NHWC, not oneDNN's blocked nChw16c, because it holds
// exactly the tensor's elements: a value's bytes in the plan are the same count either
// way, only their order differs, so the planner's sizes stay right without padded channels.
//
// The choice is a fact of the whole prepared graph: a value is channels-last only when its
// producer and every consumer are fast nodes that take it so, it is not a graph input,
// output or constant, and its 4-d float or 8-bit (an integer Conv's) tensor has a spatial
// extent over 1 (below that both orders are the same bytes). Nodes whose inputs and outputs
// must share an order (elementwise ones, pools, Concat on channels) tie their values into
// one class; a class is channels-last or not as a whole. A node that oneDNN cannot prepare
// in that order turns its classes back to row-major, and the nodes around them are
// prepared again.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/fast/prepared_node.h"

namespace memledger::exec::fast {

struct PreparedGraph {
  ChannelsLast channels_last;  // by value index
  // By position in graph.order(): the fast kernel, or null when the reference one runs it.
  std::vector<std::unique_ptr<PreparedNode>> nodes;
  std::vector<std::string> why;  // by position: why the fast set does not run it (or empty)
  int channels_last_values = 0;
};

// Prepares every node of `graph` with the fast set (options.channels_last is ignored: the
// layouts are chosen here). `blocker` says why a node may not run fast at all (dtype, the
// reference kernel's own check), empty when it may.
PreparedGraph prepare_graph(const Graph& graph, PrepareOptions options,
                            const std::function<std::string(const Node&)>& blocker);

}  // namespace memledger::exec::fast
