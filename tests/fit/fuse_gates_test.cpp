#include "memledger/fit/fuse_gates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/interpreter.h"
#include "memledger/ir/self_gated.h"
#include "memledger/ir/verifier.h"
#include "memledger/plan/memory_plan.h"
#include "passes/pass_test_util.h"

namespace memledger {
namespace {

using testing::add_act;
using testing::add_same_conv;
using testing::kNCHW;

// x → Conv → c; SiLU as torch exports it: Mul(c, Sigmoid(c)) → s; hard-swish with the gate
// first: Mul(HardSigmoid(s), s) → h; a Sigmoid read twice (by a Mul and the output) stays.
Graph gated_graph() {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 3, 6, 6}, .roles = kNCHW});
  const ValueId c = add_act(g, "c", {1, 4, 6, 6});
  add_same_conv(g, "conv", x, c, 3, 5);
  const ValueId sig = add_act(g, "sig", {1, 4, 6, 6}), s = add_act(g, "s", {1, 4, 6, 6});
  g.add_node({.name = "sigmoid", .op = "Sigmoid", .inputs = {c}, .outputs = {sig}});
  g.add_node({.name = "silu", .op = "Mul", .inputs = {c, sig}, .outputs = {s}});
  const ValueId hs = add_act(g, "hs", {1, 4, 6, 6}), h = add_act(g, "h", {1, 4, 6, 6});
  g.add_node({.name = "hardsigmoid",
              .op = "HardSigmoid",
              .inputs = {s},
              .outputs = {hs},
              .attributes = {{"alpha", 0.16666667f}, {"beta", 0.5f}}});
  g.add_node({.name = "hardswish", .op = "Mul", .inputs = {hs, s}, .outputs = {h}});
  const ValueId kept = add_act(g, "kept", {1, 4, 6, 6}), y = add_act(g, "y", {1, 4, 6, 6});
  g.add_node({.name = "kept_sigmoid", .op = "Sigmoid", .inputs = {h}, .outputs = {kept}});
  g.add_node({.name = "gated_again", .op = "Mul", .inputs = {h, kept}, .outputs = {y}});
  g.mark_output(y);
  g.mark_output(kept);
  return g;
}

TEST(FuseGates, SelfGatedActivationsRunInPlaceWithTheSameBits) {
  const Graph g = gated_graph();
  const FusedGates fused = fuse_self_gated(g);
  EXPECT_EQ(fused.fused, 2);  // the Sigmoid that is also a graph output stays
  verify_graph(fused.graph);
  std::vector<std::string> ops;
  for (NodeId n : fused.graph.order()) ops.push_back(fused.graph.node(n).op);
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "SelfGated", "SelfGated", "Sigmoid", "Mul"}));
  const Node& hard = fused.graph.node(fused.graph.order()[2]);
  EXPECT_EQ(hard.name, "hardswish");
  EXPECT_EQ(hard.string_attr("gate", ""), "HardSigmoid");
  EXPECT_EQ(hard.float_attr("alpha", 0), 0.16666667f);

  // Bit-identical, also on values where the gates saturate or underflow.
  std::vector<Tensor> inputs = random_inputs(g, 7);
  float* x = inputs[0].data<float>().data();
  x[0] = 90.0f;
  x[1] = -90.0f;
  x[2] = 3.0f;
  x[3] = -3.0f;
  x[4] = std::numeric_limits<float>::denorm_min();
  const std::vector<Tensor> reference = run_graph(g, inputs, {.kernels = KernelSet::kReference});
  const std::vector<Tensor> got = run_graph(fused.graph, inputs, {.kernels = KernelSet::kReference});
  ASSERT_EQ(got.size(), reference.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == reference[i]) << "output " << i;

  // One buffer fewer at each gate: the SelfGated output takes its input's bytes.
  const DeviceProfile host = with_model_dtypes(resolve_device("host"));
  const MemoryPlan before = plan_memory(g, host, {.in_place = true});
  const MemoryPlan after = plan_memory(fused.graph, host, {.in_place = true});
  // At the SiLU (step 1 in both orders: the Sigmoid, then the SelfGated) one buffer of c's size fewer is live.
  ASSERT_GT(before.ledger.timeline.size(), 1u);
  ASSERT_GT(after.ledger.timeline.size(), 1u);
  EXPECT_EQ(before.ledger.timeline[1].live_bytes - after.ledger.timeline[1].live_bytes, 4 * 6 * 6 * 4);
  EXPECT_LE(after.ledger.peak_live_bytes, before.ledger.peak_live_bytes);
  int in_place = 0;
  for (const LiveBuffer& b : after.liveness.buffers)
    if (b.value.valid() && fused.graph.value(b.value).producer.valid() &&
        is_self_gated(fused.graph.node(fused.graph.value(b.value).producer)))
      in_place += b.alias_of.has_value();
  EXPECT_EQ(in_place, 2);
  const ArenaRunReport r = run_in_arena(fused.graph, after, inputs, reference);
  EXPECT_TRUE(r.clean()) << r.failure;
}

TEST(FuseGates, SelfGatedChecksItsGate) {
  const Graph g = gated_graph();
  const FusedGates fused = fuse_self_gated(g);
  Node node = fused.graph.node(fused.graph.order()[1]);
  ASSERT_TRUE(is_self_gated(node));
  EXPECT_EQ(check_self_gated(fused.graph, node), "");
  node.attributes["gate"] = std::string("Tanh");
  EXPECT_NE(check_self_gated(fused.graph, node).find("attribute 'gate' is 'Tanh'"), std::string::npos);
}

TEST(FuseGates, LeavesOtherProductsAlone) {
  Graph g;
  const ValueId x = g.add_input({.name = "x", .shape = {1, 2, 4, 4}, .roles = kNCHW});
  const ValueId z = g.add_input({.name = "z", .shape = {1, 2, 4, 4}, .roles = kNCHW});
  const ValueId sig = add_act(g, "sig", {1, 2, 4, 4}), y = add_act(g, "y", {1, 2, 4, 4});
  g.add_node({.name = "sigmoid", .op = "Sigmoid", .inputs = {z}, .outputs = {sig}});
  g.add_node({.name = "gate_other", .op = "Mul", .inputs = {x, sig}, .outputs = {y}});  // gates x by z
  g.mark_output(y);
  EXPECT_EQ(fuse_self_gated(g).fused, 0);
}

}  // namespace
}  // namespace memledger
