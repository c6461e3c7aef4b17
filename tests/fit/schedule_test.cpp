// The memory-aware schedule: on small DAGs whose optimum is known by hand (or by trying
// every topological order), it finds the optimum, says so, reports exactly the ledger's
// figure, and is never worse than the model's order; Graph::set_order refuses an order
// that is not a topological permutation of the live nodes.
#include "memledger/fit/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "memledger/core/error.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/fit/ordered_plan.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/report/html_report.h"
#include "memledger/report/json_report.h"
#include "memledger/report/text_report.h"

namespace memledger {
namespace {

// Under the host profile a float32 [1, 16·u] tensor holds exactly u × 64 B.
constexpr int64_t kUnit = 64;

DeviceProfile host_without_constants() {
  DeviceProfile p = builtin_profile("host");
  p.constants = ConstantResidency::kExternal;  // the weights are the same in every order
  return p;
}

// Builds graphs of tensors measured in units.
struct Builder {
  Graph g;
  int names = 0;

  ValueId value(int units) {
    return g.add_value({.name = "v" + std::to_string(names++),
                        .dtype = DType::kFloat32,
                        .shape = {1, 16 * units},
                        .roles = unknown_roles(2)});
  }
  ValueId input(int units) {
    return g.add_input({.name = "in" + std::to_string(names++),
                        .dtype = DType::kFloat32,
                        .shape = {1, 16 * units},
                        .roles = unknown_roles(2)});
  }
  int units(ValueId v) const { return static_cast<int>(g.value(v).shape[1] / 16); }
  // x · W: changes the size; the weight is a constant.
  ValueId matmul(ValueId x, int out_units, const std::string& name) {
    Tensor w(DType::kFloat32, {16 * units(x), 16 * out_units});
    for (int64_t i = 0; i < w.elements(); ++i) w.data<float>()[i] = static_cast<float>((i * 7) % 5) * 0.01f;
    const ValueId wv = g.add_constant(name + ".w", std::move(w), unknown_roles(2));
    const ValueId y = value(out_units);
    g.add_node({.name = name, .op = "MatMul", .inputs = {x, wv}, .outputs = {y}});
    return y;
  }
  ValueId relu(ValueId x, const std::string& name) {
    const ValueId y = value(units(x));
    g.add_node({.name = name, .op = "Relu", .inputs = {x}, .outputs = {y}});
    return y;
  }
  ValueId add(ValueId a, ValueId b, const std::string& name) {
    const ValueId y = value(units(a));
    g.add_node({.name = name, .op = "Add", .inputs = {a, b}, .outputs = {y}});
    return y;
  }
  ValueId concat(const std::vector<ValueId>& xs, const std::string& name) {
    int total = 0;
    for (ValueId x : xs) total += units(x);
    const ValueId y = value(total);
    g.add_node(
        {.name = name, .op = "Concat", .inputs = xs, .outputs = {y}, .attributes = {{"axis", Attribute(int64_t{1})}}});
    return y;
  }
};

// x (1 unit) feeds two branches, each a big MatMul (10 units) and a small one (1 unit),
// joined by a Concat; the model's order runs both big ones first.
Graph two_branches() {
  Builder b;
  const ValueId x = b.input(1);
  const ValueId a1 = b.matmul(x, 10, "a1");
  const ValueId c1 = b.matmul(x, 10, "b1");
  const ValueId a2 = b.matmul(a1, 1, "a2");
  const ValueId c2 = b.matmul(c1, 1, "b2");
  b.g.mark_output(b.concat({a2, c2}, "cat"));
  return b.g;
}

std::vector<std::string> names(const Graph& g, const std::vector<NodeId>& order) {
  std::vector<std::string> out;
  for (NodeId n : order) out.push_back(g.node(n).name);
  return out;
}

TEST(Schedule, TwoBranchesRunOneAfterTheOther) {
  const Graph g = two_branches();
  const DeviceProfile p = host_without_constants();
  const ScheduleResult r = memory_aware_schedule(g, p);
  // Model order: at b1, x + a1 + b1 = 21 units are live. Best: finish a branch first; at
  // the second big MatMul x, the first branch's small result and its own output: 12 units.
  EXPECT_EQ(r.model_order_peak_bytes, 21 * kUnit);
  EXPECT_EQ(r.peak_live_bytes, 12 * kUnit);
  EXPECT_TRUE(r.optimal);
  EXPECT_EQ(r.method, "exact-dp");
  const auto order = names(g, r.order);
  const auto at = [&](const std::string& n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
  EXPECT_TRUE((at("a2") < at("b1")) || (at("b2") < at("a1"))) << ::testing::PrintToString(order);
}

TEST(Schedule, ReportedFigureIsTheLedgersAndThePlanRunsInItsArena) {
  Graph g = two_branches();
  const DeviceProfile p = host_without_constants();
  const ScheduleResult r = memory_aware_schedule(g, p);
  EXPECT_EQ(peak_live_of_order(g, r.order, p), r.peak_live_bytes);
  EXPECT_EQ(plan_memory(g, p).ledger.peak_live_bytes, r.model_order_peak_bytes);
  const std::vector<Tensor> inputs = random_inputs(g, 5);
  // With the kernels the arena run uses (the reference set): run_in_arena compares like with like.
  const std::vector<Tensor> reference = run_graph(g, inputs, {.kernels = KernelSet::kReference});
  g.set_order(r.order);
  const MemoryPlan plan = plan_memory(g, p);
  EXPECT_EQ(plan.ledger.peak_live_bytes, r.peak_live_bytes);
  EXPECT_EQ(plan.arena_bytes, r.peak_live_bytes);
  // The reordered graph computes the same numbers, inside its arena, with no guard broken.
  const ArenaRunReport run = run_in_arena(g, plan, inputs, reference);
  EXPECT_TRUE(run.clean()) << run.failure << (run.violations.empty() ? "" : run.violations[0].message);
}

// Text, JSON and HTML say which order the plan is for and give the peak of each.
TEST(Schedule, ReportsSayWhichOrderAndThePeakOfEach) {
  Graph g = two_branches();
  const DeviceProfile p = host_without_constants();
  const MemoryPlan model = plan_memory(g, p);
  EXPECT_NE(text_report(model).find("order: the model's own (a memory-aware order was not searched"),
            std::string::npos);
  EXPECT_NE(plan_report_json(g, model, p, "m").find("\"searched\": false"), std::string::npos);
  EXPECT_NE(plan_report_html(g, model, p, "m").find("memory-aware order not searched"), std::string::npos);

  // The plan of the searched order, the schedule beside it (fit/ordered_plan.h).
  const OrderedPlan ordered = plan_in_order(g, p, {}, {}, ScheduleOptions{});
  ASSERT_TRUE(ordered.schedule.has_value());
  EXPECT_EQ(ordered.graph.order(), ordered.schedule->order);
  const MemoryPlan& plan = ordered.plan;
  const ScheduleResult* r = ordered.schedule_or_null();
  EXPECT_NE(text_report(plan, {.schedule = r}).find("order: memory-aware (exact-dp, optimal, "), std::string::npos);
  EXPECT_NE(text_report(plan, {.schedule = r})
                .find("peak-live 768 B (768 B) against 1.31 KiB (1344 B) in the model's order, 1.75x lower"),
            std::string::npos);
  const std::string json = plan_report_json(ordered.graph, plan, p, "m", nullptr, r);
  for (const char* key : {"\"order\": \"memory\"", "\"model_order_peak_bytes\": 1344", "\"peak_live_bytes\": 768",
                          "\"optimal\": true", "\"nodes\": ["})
    EXPECT_NE(json.find(key), std::string::npos) << key;
  const std::string html = plan_report_html(ordered.graph, plan, p, "m", r);
  EXPECT_NE(html.find("model order peak-live"), std::string::npos);
  EXPECT_NE(html.find("data-bytes=\"1344\""), std::string::npos);
}

TEST(Schedule, AChainKeepsTheModelsOrderAndProvesIt) {
  Builder b;
  ValueId x = b.input(2);
  for (int i = 0; i < 5; ++i) x = b.matmul(x, 2 + i, "m" + std::to_string(i));
  b.g.mark_output(x);
  const ScheduleResult r = memory_aware_schedule(b.g, host_without_constants());
  EXPECT_EQ(r.order, b.g.order());
  EXPECT_EQ(r.peak_live_bytes, r.model_order_peak_bytes);
  EXPECT_EQ(r.peak_live_bytes, (5 + 6) * kUnit);  // the last MatMul: 5 units in, 6 out
  EXPECT_TRUE(r.optimal);
}

// In-place: a Relu over a big value that another branch still reads must wait for it, or
// the big value and a copy of it are live together; run after that reader, it writes over
// the big value in place.
TEST(Schedule, InPlaceAliasesCountAsTheLedgerCountsThem) {
  Builder b;
  const ValueId in = b.input(1);
  const ValueId x = b.matmul(in, 8, "big");
  const ValueId r = b.relu(x, "relu");
  const ValueId s = b.matmul(x, 1, "side");
  const ValueId rs = b.matmul(r, 1, "shrink");
  b.g.mark_output(b.add(rs, s, "join"));
  const DeviceProfile p = host_without_constants();
  const ScheduleResult result = memory_aware_schedule(b.g, p);
  // Model order: relu cannot overwrite x (side reads it later); at side x + r + s = 17.
  EXPECT_EQ(result.model_order_peak_bytes, 17 * kUnit);
  // side first (x + s = 9), then relu over x in place (x + s = 9), shrink: r + s + rs = 10.
  EXPECT_EQ(result.peak_live_bytes, 10 * kUnit);
  EXPECT_TRUE(result.optimal);
  EXPECT_EQ(peak_live_of_order(b.g, result.order, p), result.peak_live_bytes);
}

// Every topological order of a small DAG, by backtracking.
void each_order(const Graph& g, const std::function<void(const std::vector<NodeId>&)>& visit) {
  const std::vector<NodeId> nodes = g.order();
  std::vector<NodeId> order;
  std::vector<char> used(nodes.size(), 0);
  std::function<void()> step = [&] {
    if (order.size() == nodes.size()) return visit(order);
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (used[i]) continue;
      bool ready = true;
      for (ValueId in : g.node(nodes[i]).inputs) {
        const NodeId p = g.value(in).producer;
        if (p.valid() && std::find(order.begin(), order.end(), p) == order.end()) ready = false;
      }
      if (!ready) continue;
      used[i] = 1;
      order.push_back(nodes[i]);
      step();
      order.pop_back();
      used[i] = 0;
    }
  };
  step();
}

// A random DAG of MatMul (resizing), Relu (in place), Add and Concat nodes: each node reads
// one or two earlier values; the values nobody reads are the outputs.
Graph random_dag(std::mt19937& rng, int nodes) {
  Builder b;
  std::vector<ValueId> values{b.input(1 + static_cast<int>(rng() % 3))};
  std::vector<int> readers(1, 0);
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "n" + std::to_string(i);
    const size_t a = rng() % values.size();
    size_t c = rng() % values.size();
    ValueId y;
    switch (rng() % 4) {
      case 0:
        y = b.matmul(values[a], 1 + static_cast<int>(rng() % 8), name);
        break;
      case 1:
        y = b.relu(values[a], name);
        break;
      case 2:
        if (b.units(values[c]) != b.units(values[a])) c = a;
        y = b.add(values[a], values[c], name);
        ++readers[c];
        break;
      default:
        y = b.concat({values[a], values[c]}, name);
        ++readers[c];
    }
    ++readers[a];
    values.push_back(y);
    readers.push_back(0);
  }
  for (size_t i = 1; i < values.size(); ++i)
    if (readers[i] == 0) b.g.mark_output(values[i]);
  return b.g;
}

TEST(Schedule, MatchesEveryOrderTriedOnRandomDags) {
  std::mt19937 rng(20261201);
  int improved = 0;
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE(trial);
    const Graph g = random_dag(rng, 7);
    for (const DeviceProfile& p : {host_without_constants(), builtin_profile("teaching")}) {
      int64_t best = std::numeric_limits<int64_t>::max();
      each_order(g, [&](const std::vector<NodeId>& order) { best = std::min(best, peak_live_of_order(g, order, p)); });
      const ScheduleResult r = memory_aware_schedule(g, p);
      EXPECT_EQ(peak_live_of_order(g, r.order, p), r.peak_live_bytes);
      EXPECT_LE(r.peak_live_bytes, r.model_order_peak_bytes);
      EXPECT_GE(r.peak_live_bytes, best);
      if (r.optimal) {
        EXPECT_EQ(r.peak_live_bytes, best) << p.name;
      }
      EXPECT_TRUE(r.optimal) << p.name;  // seven nodes: the exact search always completes
      improved += r.peak_live_bytes < r.model_order_peak_bytes ? 1 : 0;
    }
  }
  EXPECT_GT(improved, 0);  // the DAGs do leave room for a better order
}

TEST(Schedule, WithNoTimeTheBeamStillNeverLosesToTheModelsOrder) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 10; ++trial) {
    const Graph g = random_dag(rng, 60);
    const DeviceProfile p = host_without_constants();
    const ScheduleResult r = memory_aware_schedule(g, p, {.time_budget_seconds = 0, .max_states_per_level = 8});
    EXPECT_EQ(peak_live_of_order(g, r.order, p), r.peak_live_bytes);
    EXPECT_LE(r.peak_live_bytes, r.model_order_peak_bytes);
    EXPECT_EQ(r.order.size(), g.order().size());
  }
}

TEST(Schedule, SetOrderRefusesWhatIsNotATopologicalPermutation) {
  Graph g = two_branches();
  const std::vector<NodeId> model = g.order();
  auto message = [&](std::vector<NodeId> order) {
    try {
      g.set_order(std::move(order));
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      return std::string(e.what());
    }
    return std::string();
  };
  std::vector<NodeId> swapped = model;
  std::swap(swapped[0], swapped[2]);  // a2 before a1
  EXPECT_NE(message(swapped).find("MatMul 'a2' comes before MatMul 'a1', which produces its input"), std::string::npos);
  EXPECT_NE(message({model.begin(), model.end() - 1}).find("4 nodes given for a graph of 5 live nodes"),
            std::string::npos);
  std::vector<NodeId> twice = model;
  twice[4] = twice[3];
  EXPECT_NE(message(twice).find("appears twice"), std::string::npos);
  EXPECT_EQ(g.order(), model);  // unchanged by a refused order
  std::vector<NodeId> fine = model;
  std::swap(fine[1], fine[2]);  // a2 before b1: still topological
  EXPECT_EQ(message(fine), "");
  EXPECT_EQ(g.order(), fine);
}

TEST(Schedule, ParsesTheKind) {
  EXPECT_EQ(parse_schedule_kind("memory"), ScheduleKind::kMemory);
  EXPECT_EQ(parse_schedule_kind("model"), ScheduleKind::kModel);
  EXPECT_THROW(parse_schedule_kind("fast"), Error);
}

}  // namespace
}  // namespace memledger
