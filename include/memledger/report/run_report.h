// The text of `memledger run` (verify/model_run.h): the ordinary run (nodes, time, kernels,
// the timed repeats), each output's summary, the arena run's text (report/arena_report.h)
// and its timed repeats, and the comparison with another model.
#pragma once

#include <string>

#include "memledger/core/tensor.h"
#include "memledger/exec/latency.h"
#include "memledger/ir/graph.h"
#include "memledger/verify/model_run.h"

namespace memledger {

// "min -0.2313, max 0.2425, mean 0.002677" ("empty" for no elements).
std::string tensor_summary(const Tensor& t);

// "latency: 5 runs after a warm-up: median 4.110 ms, min 3.984, max 4.840, mean 4.199".
std::string latency_line(const std::string& what, const LatencyStats& stats);

// `compare_path` names the model compared with (options.compare), shown as given.
std::string model_run_text(const Graph& graph, const ModelRun& run, const ModelRunOptions& options,
                           const std::string& compare_path);

}  // namespace memledger
