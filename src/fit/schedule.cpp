#include "memledger/fit/schedule.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

#include "memledger/core/error.h"
#include "memledger/plan/ledger.h"

namespace memledger {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
// Sets per level of the beam search that gives the first bound, and of the search that
// finishes once the time budget is spent.
constexpr int64_t kHeuristicWidth = 512;
constexpr int64_t kOvertimeWidth = 64;

// A value as the search sees it: its bytes in the arena and when it holds them.
struct ValueInfo {
  enum class Kind {
    kActivation,  // from its producer to its last consumer (or the end, for an output)
    kInput,       // a graph input in the arena: from the start to its last consumer
    kJustInTime,  // a constant: from its first consumer to its last
    kEverywhere,  // resident constants, buffers outside the arena: the same in every order
  };
  Kind kind = Kind::kActivation;
  int64_t bytes = 0;
  bool graph_output = false;
  bool donated = false;        // a graph input an output may be written over
  std::vector<int> consumers;  // node indices, each once
};

struct NodeInfo {
  std::vector<int> inputs;        // value indices, each once
  std::vector<int> outputs;       // value indices
  std::vector<int> overwritable;  // values the single output may be written over, in the contract's order
  int64_t workspace = 0;
  std::vector<int> preds, succs;  // node indices, each once
  // Reads only buffers that are the same in every order (resident or external constants
  // and inputs), needs no workspace and has a consumer: running it just before its first
  // consumer is never worse (its step holds no more than that consumer's will), so the
  // search runs it there and leaves it out of the sets (each such node would double them).
  bool deferred = false;
  std::vector<int> core_preds;      // predecessors that are not deferred
  std::vector<int> deferred_preds;  // deferred predecessors, run just before this node
};

// The search's model of a graph; node indices are positions in the graph's own order.
struct Model {
  std::vector<ValueInfo> values;
  std::vector<NodeInfo> nodes;
  std::vector<NodeId> ids;  // node index → NodeId
  int64_t start_bytes = 0;  // memory before the first node: fixed buffers and the inputs
  size_t words = 0;         // 64-bit words of a node set
};

Model build_model(const Graph& graph, const Liveness& live, const DeviceProfile& profile, const PlanOptions& options) {
  Model m;
  const int n = live.steps();
  m.ids = live.schedule;
  m.words = (static_cast<size_t>(n) + 63) / 64;
  std::unordered_map<ValueId, int> index;
  for (const LiveBuffer& b : live.buffers) {
    if (!b.value.valid()) continue;
    ValueInfo v;
    v.bytes = b.external ? 0 : b.physical_bytes;
    v.graph_output = graph.is_graph_output(b.value);
    switch (b.category) {
      case BufferCategory::kInput:
        v.kind = b.external ? ValueInfo::Kind::kEverywhere : ValueInfo::Kind::kInput;
        v.donated = options.donate_inputs && !b.external;
        break;
      case BufferCategory::kConstant:
        v.kind = b.external || v.graph_output || profile.constants == ConstantResidency::kResident
                     ? ValueInfo::Kind::kEverywhere
                     : ValueInfo::Kind::kJustInTime;
        break;
      default:
        v.kind = ValueInfo::Kind::kActivation;
    }
    index[b.value] = static_cast<int>(m.values.size());
    m.values.push_back(std::move(v));
  }
  m.nodes.resize(static_cast<size_t>(n));
  std::unordered_map<NodeId, int> position;
  for (int i = 0; i < n; ++i) position[m.ids[static_cast<size_t>(i)]] = i;
  for (int i = 0; i < n; ++i) {
    const Node& node = graph.node(m.ids[static_cast<size_t>(i)]);
    NodeInfo& info = m.nodes[static_cast<size_t>(i)];
    for (ValueId in : node.inputs) {
      const auto it = in.valid() ? index.find(in) : index.end();
      if (it == index.end()) continue;
      if (std::find(info.inputs.begin(), info.inputs.end(), it->second) != info.inputs.end()) continue;
      info.inputs.push_back(it->second);
      m.values[static_cast<size_t>(it->second)].consumers.push_back(i);
      const NodeId producer = graph.value(in).producer;
      const auto p = producer.valid() ? position.find(producer) : position.end();
      if (p != position.end() && std::find(info.preds.begin(), info.preds.end(), p->second) == info.preds.end()) {
        info.preds.push_back(p->second);
        m.nodes[static_cast<size_t>(p->second)].succs.push_back(i);
      }
    }
    for (ValueId out : node.outputs)
      if (out.valid() && index.count(out)) info.outputs.push_back(index.at(out));
    const KernelContract& contract = live.contracts[static_cast<size_t>(i)];
    info.workspace = contract.workspace_bytes;
    if (options.in_place && node.outputs.size() == 1)
      for (int k : contract.overwritable_inputs) {
        const ValueId in = node.inputs.at(static_cast<size_t>(k));
        if (in.valid() && index.count(in)) info.overwritable.push_back(index.at(in));
      }
  }
  for (NodeInfo& info : m.nodes) {
    bool has_consumer = false;
    for (int o : info.outputs) has_consumer = has_consumer || !m.values[static_cast<size_t>(o)].consumers.empty();
    info.deferred = info.workspace == 0 && has_consumer && info.preds.empty() &&
                    std::all_of(info.inputs.begin(), info.inputs.end(), [&](int v) {
                      return m.values[static_cast<size_t>(v)].kind == ValueInfo::Kind::kEverywhere;
                    });
  }
  for (NodeInfo& info : m.nodes)
    for (int p : info.preds)
      (m.nodes[static_cast<size_t>(p)].deferred ? info.deferred_preds : info.core_preds).push_back(p);
  for (const ValueInfo& v : m.values) {
    if (v.kind == ValueInfo::Kind::kEverywhere) m.start_bytes += v.bytes;
    if (v.kind == ValueInfo::Kind::kInput && (v.graph_output || !v.consumers.empty())) m.start_bytes += v.bytes;
  }
  return m;
}

bool has(const uint64_t* set, int node) { return (set[node >> 6] >> (node & 63)) & 1u; }
void put(uint64_t* set, int node) { set[node >> 6] |= uint64_t{1} << (node & 63); }
void drop(uint64_t* set, int node) { set[node >> 6] &= ~(uint64_t{1} << (node & 63)); }

struct Step {
  int64_t peak = 0;   // live while the node runs
  int64_t after = 0;  // live once it has run
};

// Running `n` after the set `done` (which holds `mem` bytes).
Step step_of(const Model& m, const uint64_t* done, int64_t mem, int n) {
  const NodeInfo& node = m.nodes[static_cast<size_t>(n)];
  auto all_run = [&](const ValueInfo& v) {  // every consumer has run once `n` has
    for (int c : v.consumers)
      if (c != n && !has(done, c)) return false;
    return true;
  };
  auto any_run = [&](const ValueInfo& v) {
    for (int c : v.consumers)
      if (has(done, c)) return true;
    return false;
  };
  int alias = -1;  // the output written over an input
  if (node.outputs.size() == 1)
    for (int x : node.overwritable) {
      const ValueInfo& v = m.values[static_cast<size_t>(x)];
      const bool writable = v.kind == ValueInfo::Kind::kActivation || (v.kind == ValueInfo::Kind::kInput && v.donated);
      if (!writable || v.graph_output || !all_run(v)) continue;
      if (m.values[static_cast<size_t>(node.outputs[0])].bytes > v.bytes) continue;
      alias = node.outputs[0];
      break;
    }
  Step s{.peak = mem + node.workspace, .after = mem};
  for (int o : node.outputs) {
    const ValueInfo& v = m.values[static_cast<size_t>(o)];
    if (o != alias) s.peak += v.bytes;
    if (v.graph_output || !v.consumers.empty()) s.after += v.bytes;
  }
  for (int x : node.inputs) {
    const ValueInfo& v = m.values[static_cast<size_t>(x)];
    switch (v.kind) {
      case ValueInfo::Kind::kActivation:
      case ValueInfo::Kind::kInput:
        if (!v.graph_output && all_run(v)) s.after -= v.bytes;
        break;
      case ValueInfo::Kind::kJustInTime: {
        const bool first = !any_run(v), last = all_run(v);
        if (first) s.peak += v.bytes;
        if (first && !last) s.after += v.bytes;
        if (!first && last) s.after -= v.bytes;
        break;
      }
      case ValueInfo::Kind::kEverywhere:
        break;
    }
  }
  return s;
}

// The model's peak-live of a complete order of node indices.
int64_t model_peak(const Model& m, const std::vector<int>& order) {
  std::vector<uint64_t> done(std::max<size_t>(m.words, 1), 0);
  int64_t mem = m.start_bytes, peak = m.nodes.empty() ? mem : 0;
  for (int n : order) {
    const Step s = step_of(m, done.data(), mem, n);
    peak = std::max(peak, s.peak);
    mem = s.after;
    put(done.data(), n);
  }
  return peak;
}

struct SearchResult {
  bool found = false;
  bool exact = false;  // no set was dropped for room or time: the order is optimal for the model
  std::vector<int> order;
  int64_t peak = 0;
  int64_t states = 0;
};

// Level by level over sets of scheduled nodes (and the ready nodes of each). A transition
// runs one ready node (after its deferred predecessors), then every ready node that runs
// without raising the peak so far and leaves no more bytes live than before it: taking
// such a node at once is never worse than taking it later (moving it earlier lowers or
// keeps the memory of every step in between). A transition whose peak reaches `prune_at`
// is cut; a level above `width` sets keeps the best by (peak, memory). Without `closure`
// every transition runs one node (a different beam when sets are dropped).
SearchResult search(const Model& m, int64_t prune_at, int64_t width, Clock::time_point deadline, bool closure = true) {
  const int n = static_cast<int>(m.nodes.size());
  const size_t w = std::max<size_t>(m.words, 1);
  const size_t stride = 2 * w;  // scheduled set, then ready set
  SearchResult result{.exact = true};
  struct Level {
    std::vector<uint64_t> bits;
    std::vector<int64_t> peak, mem;
  };
  // Per level, per set: the set it came from and the nodes the transition ran.
  struct Trace {
    std::vector<int32_t> parent, begin, length, nodes;
  };
  Level level;
  level.bits.assign(stride, 0);
  for (int i = 0; i < n; ++i) {
    const NodeInfo& node = m.nodes[static_cast<size_t>(i)];
    if (!node.deferred && node.core_preds.empty()) put(level.bits.data() + w, i);
  }
  level.peak.push_back(n == 0 ? m.start_bytes : 0);
  level.mem.push_back(m.start_bytes);
  if (n == 0) {
    result.found = true;
    result.peak = m.start_bytes;
    return result;
  }
  std::vector<Trace> history;
  std::unordered_map<std::string, int32_t> seen;
  std::vector<uint64_t> next_set(stride), trial(w);
  std::vector<int32_t> added;
  int64_t best = kNoLimit;

  // Runs `node`'s deferred predecessors not run yet, then `node`, on `set`.
  auto macro = [&](uint64_t* set, int node, Step& step, int64_t& peak, bool record) {
    auto run = [&](int x) {
      step = step_of(m, set, step.after, x);
      peak = std::max(peak, step.peak);
      put(set, x);
      if (record) added.push_back(x);
    };
    for (int d : m.nodes[static_cast<size_t>(node)].deferred_preds)
      if (!has(set, d)) run(d);
    run(node);
  };
  auto update_ready = [&](const uint64_t* done, uint64_t* ready, int node) {
    drop(ready, node);
    for (int succ : m.nodes[static_cast<size_t>(node)].succs) {
      const NodeInfo& next_node = m.nodes[static_cast<size_t>(succ)];
      bool ok = !has(done, succ) && !next_node.deferred;
      for (int p : next_node.core_preds) ok = ok && has(done, p);
      if (ok) put(ready, succ);
    }
  };
  // The whole order of a complete set: its transitions' nodes back to the start.
  auto trace_back = [&](int32_t parent) {
    std::vector<std::vector<int32_t>> parts{added};
    for (auto h = static_cast<int64_t>(history.size()) - 1; h >= 0; --h) {
      const Trace& t = history[static_cast<size_t>(h)];
      const auto at = static_cast<size_t>(parent);
      parts.emplace_back(t.nodes.begin() + t.begin[at], t.nodes.begin() + t.begin[at] + t.length[at]);
      parent = t.parent[at];
    }
    std::vector<int> order;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) order.insert(order.end(), it->begin(), it->end());
    return order;
  };

  while (!level.peak.empty()) {
    Level next;
    Trace trace;
    seen.clear();
    const auto count = static_cast<int32_t>(level.peak.size());
    for (int32_t si = 0; si < count; ++si) {
      const uint64_t* done = level.bits.data() + static_cast<size_t>(si) * stride;
      const uint64_t* ready = done + w;
      for (size_t word = 0; word < w; ++word) {
        for (uint64_t bits = ready[word]; bits != 0; bits &= bits - 1) {
          const int node = static_cast<int>(word * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
          std::copy(done, done + stride, next_set.begin());
          uint64_t* nd = next_set.data();
          uint64_t* nr = nd + w;
          added.clear();
          Step s{.peak = 0, .after = level.mem[static_cast<size_t>(si)]};
          int64_t peak = level.peak[static_cast<size_t>(si)];
          macro(nd, node, s, peak, true);
          if (peak >= prune_at || peak >= best) continue;
          update_ready(nd, nr, node);
          for (bool again = closure; again;) {
            again = false;
            for (size_t rw = 0; rw < w && !again; ++rw)
              for (uint64_t rb = nr[rw]; rb != 0 && !again; rb &= rb - 1) {
                const int r = static_cast<int>(rw * 64 + static_cast<size_t>(__builtin_ctzll(rb)));
                std::copy(nd, nd + w, trial.begin());
                Step t{.peak = 0, .after = s.after};
                int64_t trial_peak = 0;
                macro(trial.data(), r, t, trial_peak, false);
                if (trial_peak > peak || t.after > s.after) continue;
                macro(nd, r, s, peak, true);
                update_ready(nd, nr, r);
                again = true;
              }
          }
          ++result.states;
          if (std::all_of(nr, nr + w, [](uint64_t x) { return x == 0; })) {  // every node has run
            if (peak < best) {
              best = peak;
              result.found = true;
              result.peak = peak;
              result.order = trace_back(si);
            }
            continue;
          }
          std::string key(reinterpret_cast<const char*>(nd), w * sizeof(uint64_t));
          auto [it, inserted] = seen.try_emplace(std::move(key), static_cast<int32_t>(next.peak.size()));
          const auto at = static_cast<size_t>(it->second);
          if (inserted) {
            next.bits.insert(next.bits.end(), next_set.begin(), next_set.end());
            next.peak.push_back(peak);
            next.mem.push_back(s.after);
            trace.parent.push_back(si);
            trace.begin.push_back(static_cast<int32_t>(trace.nodes.size()));
            trace.length.push_back(static_cast<int32_t>(added.size()));
            trace.nodes.insert(trace.nodes.end(), added.begin(), added.end());
          } else if (peak < next.peak[at]) {
            next.peak[at] = peak;
            trace.parent[at] = si;
            trace.begin[at] = static_cast<int32_t>(trace.nodes.size());
            trace.length[at] = static_cast<int32_t>(added.size());
            trace.nodes.insert(trace.nodes.end(), added.begin(), added.end());
          }
        }
      }
    }
    const int64_t room = Clock::now() > deadline ? std::min(width, kOvertimeWidth) : width;
    if (static_cast<int64_t>(next.peak.size()) > room) {
      result.exact = false;
      std::vector<int32_t> keep(next.peak.size());
      std::iota(keep.begin(), keep.end(), 0);
      std::nth_element(keep.begin(), keep.begin() + room, keep.end(), [&](int32_t a, int32_t b) {
        const auto ua = static_cast<size_t>(a), ub = static_cast<size_t>(b);
        return std::pair{next.peak[ua], next.mem[ua]} < std::pair{next.peak[ub], next.mem[ub]};
      });
      keep.resize(static_cast<size_t>(room));
      Level kept;
      Trace kept_trace;
      kept_trace.nodes = std::move(trace.nodes);
      for (int32_t k : keep) {
        const auto uk = static_cast<size_t>(k);
        kept.bits.insert(kept.bits.end(), next.bits.begin() + static_cast<std::ptrdiff_t>(uk * stride),
                         next.bits.begin() + static_cast<std::ptrdiff_t>((uk + 1) * stride));
        kept.peak.push_back(next.peak[uk]);
        kept.mem.push_back(next.mem[uk]);
        kept_trace.parent.push_back(trace.parent[uk]);
        kept_trace.begin.push_back(trace.begin[uk]);
        kept_trace.length.push_back(trace.length[uk]);
      }
      next = std::move(kept);
      trace = std::move(kept_trace);
    }
    history.push_back(std::move(trace));
    level = std::move(next);
  }
  return result;
}

}  // namespace

std::string_view to_string(ScheduleKind kind) { return kind == ScheduleKind::kMemory ? "memory" : "model"; }

ScheduleKind parse_schedule_kind(std::string_view text) {
  if (text == "model") return ScheduleKind::kModel;
  if (text == "memory") return ScheduleKind::kMemory;
  fail("'{}': expected model or memory", text);
}

ScheduleResult memory_aware_schedule(const Graph& graph, const DeviceProfile& profile, const ScheduleOptions& options) {
  const auto start = Clock::now();
  const Liveness live = compute_liveness(graph, profile, options.plan);
  const Model m = build_model(graph, live, profile, options.plan);
  ScheduleResult result;
  result.order = graph.order();
  result.model_order_peak_bytes = make_ledger(graph, live).peak_live_bytes;
  result.peak_live_bytes = result.model_order_peak_bytes;
  result.method = "model";

  std::vector<int> model_order(m.nodes.size());
  std::iota(model_order.begin(), model_order.end(), 0);
  const int64_t model_bound = model_peak(m, model_order);
  // A beam search first: a good order quickly, and the bound that cuts the exact search.
  const SearchResult beam = search(m, model_bound + 1, kHeuristicWidth, Clock::time_point::max());
  result.states += beam.states;
  std::vector<SearchResult> found;
  int64_t bound = model_bound;
  if (beam.found) {
    bound = std::min(bound, beam.peak);
    found.push_back(beam);
  }
  if (!beam.exact) {  // the beam of one node per transition drops other sets: a second opinion
    const SearchResult single = search(m, bound + 1, kHeuristicWidth, Clock::time_point::max(), false);
    result.states += single.states;
    if (single.found && single.peak <= bound) {
      bound = single.peak;
      found.push_back(single);
    }
  }
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.time_budget_seconds));
  // Only orders strictly below the best known: when none is found and nothing was
  // dropped, the best known is optimal.
  SearchResult exact = beam;
  if (!beam.exact) {
    exact = search(m, bound, options.max_states_per_level, deadline);
    result.states += exact.states;
    if (exact.found) found.push_back(exact);
  }
  const int64_t model_optimum = exact.found ? std::min(exact.peak, bound) : bound;

  // Every candidate is planned by the ledger; the lowest wins, the model's order on a tie.
  for (const SearchResult& candidate : found) {
    std::vector<NodeId> order;
    order.reserve(candidate.order.size());
    for (int i : candidate.order) order.push_back(m.ids[static_cast<size_t>(i)]);
    const int64_t peak = peak_live_of_order(graph, order, profile, options.plan);
    if (peak < result.peak_live_bytes) {
      result.peak_live_bytes = peak;
      result.order = std::move(order);
      result.method = exact.exact ? "exact-dp" : "heuristic";
    }
  }
  // The model never counts more than the ledger, so the ledger's figure at the model's
  // optimum is a proof.
  result.optimal = exact.exact && result.peak_live_bytes <= model_optimum;
  if (result.method == "model" && result.optimal) result.method = "exact-dp";
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace memledger
