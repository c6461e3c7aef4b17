// The fast set's integer elementwise loops, GlobalAveragePool, MaxPool, Concat, exact f32 Conv and Gemm
// (exec/fast/kernels_integer_eltwise.cpp, kernels_integer_conv*.cpp) against the reference
// integer kernels: they compute the reference's very integers (bit-identical, in either
// byte order, under both requantization rules, int8 and uint8), the int8 Gemm on oneDNN's
// int8 convolution too. Run once more under ONEDNN_MAX_CPU_ISA=AVX2
// by scripts/test.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "exec/fast/isa.h"
#include "exec/first_difference.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {
namespace {

constexpr DType kI8 = DType::kInt8, kU8 = DType::kUInt8;
constexpr Requantization kFloat = Requantization::kFloatScale, kFixed = Requantization::kFixedPoint;

Quantization per_tensor(float scale, int64_t zero_point) { return {.scales = {scale}, .zero_points = {zero_point}}; }
int64_t zero_of(DType t) { return t == kU8 ? 128 : 0; }

// Seeded 8-bit codes over the whole range of `type`.
Tensor codes(DType type, Shape shape, uint32_t seed) {
  Tensor t(type, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(type == kU8 ? 0 : -128, type == kU8 ? 255 : 127);
  for (int64_t i = 0; i < t.elements(); ++i) {
    if (type == kI8)
      t.data<int8_t>()[static_cast<size_t>(i)] = static_cast<int8_t>(d(rng));
    else
      t.data<uint8_t>()[static_cast<size_t>(i)] = static_cast<uint8_t>(d(rng));
  }
  return t;
}

// Runs g on the fast and the reference kernels; the fast run (and its arena run under the
// fast kernels' own plan) must give the reference's bytes.
void expect_fast_equals_reference(const Graph& g, const std::vector<Tensor>& inputs,
                                  const std::vector<std::string>& reference_nodes = {}) {
  const std::vector<Tensor> want = run_graph(g, inputs, {.kernels = KernelSet::kReference});
  const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1, .reference_nodes = reference_nodes};
  const std::vector<Tensor> got = Executor(g, exec).run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(first_difference(got[i], want[i]), -1) << "output " << i;
  const MemoryPlan plan = plan_for_kernels(g, builtin_profile("host"), exec);
  const ArenaRunReport report = run_in_arena(g, plan, inputs, exec);
  EXPECT_TRUE(report.clean()) << report.failure;
  EXPECT_TRUE(report.untouched_workspaces.empty());
}

struct BinaryCase {
  const char* name;
  Shape other;
  bool other_first;  // the broadcast operand is input 0
};
const BinaryCase kBinaryCases[] = {
    {"same shape", {1, 8, 5, 7}, false},
    {"scalar", {}, false},
    {"one-element", {1}, true},
    {"per channel [1,C,1,1]", {1, 8, 1, 1}, false},
    {"per channel [C,1,1], first", {8, 1, 1}, true},
};

Graph binary_graph(const char* op, DType type, const Shape& other, bool other_first, Requantization rule) {
  Graph g;
  g.requantization = rule;
  const int64_t z = zero_of(type);
  const Shape full{1, 8, 5, 7};
  const ValueId a = g.add_input({.name = "a", .dtype = type, .shape = full, .quant = per_tensor(0.031f, z + 5)});
  const ValueId b = g.add_input({.name = "b", .dtype = type, .shape = other, .quant = per_tensor(0.067f, z - 9)});
  const ValueId y = g.add_value({.name = "y", .dtype = type, .shape = full, .quant = per_tensor(0.05f, z + 2)});
  g.add_node({.name = "op",
              .op = op,
              .inputs = other_first ? std::vector<ValueId>{b, a} : std::vector<ValueId>{a, b},
              .outputs = {y}});
  g.mark_output(y);
  return g;
}

TEST(FastInteger, AddAndMulGiveTheReferenceKernelsIntegers) {
  for (const BinaryCase& c : kBinaryCases)
    for (const DType type : {kI8, kU8})
      for (const Requantization rule : {kFloat, kFixed})
        for (const char* op : {"Add", "Mul"}) {
          SCOPED_TRACE(fmt::format("{} {} {} {}", op, c.name, dtype_name(type), to_string(rule)));
          const Graph g = binary_graph(op, type, c.other, c.other_first, rule);
          const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
          EXPECT_EQ(fast.kernel_set_of(g.order()[0]), KernelSet::kFast) << fast.summary();
          const Tensor a = codes(type, {1, 8, 5, 7}, 1), b = codes(type, c.other, 2);
          expect_fast_equals_reference(g, {a, b});  // the graph's inputs, as added
        }
  // A broadcast the loops do not take ([1,1,5,7] over [1,8,5,7]) stays on the reference kernel.
  const Graph g = binary_graph("Add", kI8, {1, 1, 5, 7}, false, kFloat);
  const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
  EXPECT_EQ(fast.kernel_set_of(g.order()[0]), KernelSet::kReference) << fast.summary();
}

TEST(FastInteger, ActivationsAndGlobalAveragePoolGiveTheReferenceKernelsIntegers) {
  for (const DType type : {kI8, kU8})
    for (const Requantization rule : {kFloat, kFixed})
      for (const char* op : {"Relu", "Sigmoid", "HardSwish", "HardSigmoid", "LeakyRelu", "Clip", "GlobalAveragePool"}) {
        SCOPED_TRACE(fmt::format("{} {} {}", op, dtype_name(type), to_string(rule)));
        Graph g;
        g.requantization = rule;
        const int64_t z = zero_of(type);
        const bool pool = std::string_view(op) == "GlobalAveragePool";
        const ValueId x =
            g.add_input({.name = "x", .dtype = type, .shape = {1, 6, 9, 11}, .quant = per_tensor(0.05f, z)});
        const ValueId y = g.add_value({.name = "y",
                                       .dtype = type,
                                       .shape = pool ? Shape{1, 6, 1, 1} : Shape{1, 6, 9, 11},
                                       .quant = per_tensor(0.013f, z - 40)});
        Node n{.name = "n", .op = op, .inputs = {x}, .outputs = {y}};
        if (std::string_view(op) == "Clip") {
          Tensor lo(DType::kFloat32, {}), hi(DType::kFloat32, {});
          lo.data<float>()[0] = -0.5f;
          hi.data<float>()[0] = 1.5f;
          n.inputs.push_back(g.add_constant("lo", lo));
          n.inputs.push_back(g.add_constant("hi", hi));
        }
        g.add_node(std::move(n));
        g.mark_output(y);
        const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
        EXPECT_EQ(fast.kernel_set_of(g.order()[0]), KernelSet::kFast) << fast.summary();
        expect_fast_equals_reference(g, {codes(type, {1, 6, 9, 11}, 3)});
      }
}

// An integer ReduceMean over the spatial axes (as mnasnet and shufflenet end: keepdims 0, the
// axes as written or negative) is GlobalAveragePool's mean, run fast; over the channels it
// stays on the reference kernel.
TEST(FastInteger, ReduceMeanOverTheSpatialAxesRunsAsTheGlobalPool) {
  struct Case {
    std::vector<int64_t> axes;
    int64_t keepdims;
    bool fast;
  };
  for (const Case& c : {Case{{2, 3}, 0, true}, Case{{-1, -2}, 1, true}, Case{{1}, 1, false}}) {
    SCOPED_TRACE(fmt::format("axes {} keepdims {}", fmt::join(c.axes, ","), c.keepdims));
    Graph g;
    g.opset = 13;
    const ValueId x = g.add_input({.name = "x", .dtype = kU8, .shape = {2, 6, 7, 5}, .quant = per_tensor(0.05f, 121)});
    Shape ys = c.axes.size() == 1 ? Shape{2, 1, 7, 5} : (c.keepdims ? Shape{2, 6, 1, 1} : Shape{2, 6});
    const ValueId y = g.add_value({.name = "y", .dtype = kU8, .shape = ys, .quant = per_tensor(0.02f, 100)});
    g.add_node({.name = "mean",
                .op = "ReduceMean",
                .inputs = {x},
                .outputs = {y},
                .attributes = {{"axes", c.axes}, {"keepdims", c.keepdims}}});
    g.mark_output(y);
    const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
    EXPECT_EQ(fast.kernel_set_of(g.order()[0]), c.fast ? KernelSet::kFast : KernelSet::kReference) << fast.summary();
    expect_fast_equals_reference(g, {codes(kU8, {2, 6, 7, 5}, 9)});
  }
}

// QuantizeLinear per tensor runs in the fast set's own loop with the reference kernel's very
// codes: halves rounded to even, saturation both ways, infinities, NaN to 0, for int8 and
// uint8, a scale whose quotients are not exact; per axis it stays on the reference kernel.
TEST(FastInteger, QuantizeLinearGivesTheReferenceKernelsCodes) {
  for (const DType type : {kI8, kU8})
    for (const bool per_axis : {false, true}) {
      SCOPED_TRACE(fmt::format("{} {}", dtype_name(type), per_axis ? "per axis" : "per tensor"));
      Graph g;
      const Shape shape{1, 3, 7, 11};
      const ValueId x = g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = shape});
      Tensor scale(DType::kFloat32, per_axis ? Shape{3} : Shape{});
      for (float& v : scale.data<float>()) v = 0.0371f;
      Tensor zero(type, per_axis ? Shape{3} : Shape{});
      for (std::byte& b : zero.bytes()) b = static_cast<std::byte>(type == kI8 ? 0xF9 : 0x83);  // -7 or 131
      // Quantized as the importer records a QuantizeLinear's output.
      const int64_t zp = type == kI8 ? -7 : 131;
      const ValueId y = g.add_value({.name = "y", .dtype = type, .shape = shape, .quant = per_tensor(0.0371f, zp)});
      if (per_axis)
        g.value(y).quant = Quantization{.scales = {0.0371f, 0.0371f, 0.0371f}, .zero_points = {zp, zp, zp}, .axis = 1};
      g.add_node({.name = "q",
                  .op = "QuantizeLinear",
                  .inputs = {x, g.add_constant("s", scale), g.add_constant("z", zero)},
                  .outputs = {y}});
      g.mark_output(y);
      Tensor in(DType::kFloat32, shape);
      auto v = in.data<float>();
      std::mt19937 rng(5);
      std::uniform_real_distribution<float> d(-6.0f, 6.0f);
      for (size_t i = 0; i < v.size(); ++i) v[i] = d(rng);
      for (size_t i = 0; i < 40; ++i) v[i] = (static_cast<float>(i) - 20.0f + 0.5f) * 0.0371f;  // near halves
      v[50] = std::numeric_limits<float>::quiet_NaN();
      v[51] = std::numeric_limits<float>::infinity();
      v[52] = -std::numeric_limits<float>::infinity();
      v[53] = 1e30f;
      v[54] = -1e30f;
      const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
      EXPECT_EQ(fast.kernel_set_of(g.order()[0]), per_axis ? KernelSet::kReference : KernelSet::kFast)
          << fast.summary();
      expect_fast_equals_reference(g, {in});
    }
}

// An integer Concat copies each input's blocks, through its 256-byte requantization table
// where its parameters differ from the output's (as the QDQ quantizer writes squeezenet's
// fire modules): the reference's integers, under either rule.
TEST(FastInteger, ConcatRequantizesThroughEachInputsTable) {
  for (const DType type : {kI8, kU8})
    for (const Requantization rule : {kFloat, kFixed}) {
      SCOPED_TRACE(fmt::format("{} {}", dtype_name(type), to_string(rule)));
      Graph g;
      g.requantization = rule;
      const Quantization yq = per_tensor(0.05f, zero_of(type) + 3);
      const ValueId a = g.add_input({.name = "a", .dtype = type, .shape = {1, 3, 4, 5}, .quant = yq});
      const ValueId b =
          g.add_input({.name = "b", .dtype = type, .shape = {1, 2, 4, 5}, .quant = per_tensor(0.083f, zero_of(type))});
      const ValueId y = g.add_value({.name = "y", .dtype = type, .shape = {1, 5, 4, 5}, .quant = yq});
      g.add_node(
          {.name = "cat", .op = "Concat", .inputs = {a, b}, .outputs = {y}, .attributes = {{"axis", int64_t{1}}}});
      g.mark_output(y);
      const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
      EXPECT_EQ(fast.kernel_set_of(g.order()[0]), KernelSet::kFast) << fast.summary();
      expect_fast_equals_reference(g, {codes(type, {1, 3, 4, 5}, 13), codes(type, {1, 2, 4, 5}, 14)});
    }
}

// An integer MaxPool (its output keeps its input's parameters: the reference's check refuses
// any other) is the max of the codes: oneDNN's s8/u8 max pooling, channels-last (the chain
// test below). Row-major oneDNN has only its reference implementation for it, slower than
// ours: the reference kernel runs it.
TEST(FastInteger, ARowMajorMaxPoolStaysOnTheReferenceKernel) {
  for (const DType type : {kI8, kU8}) {
    SCOPED_TRACE(dtype_name(type));
    Graph g;
    const Quantization q = per_tensor(0.05f, zero_of(type) + 3);
    const ValueId x = g.add_input({.name = "x", .dtype = type, .shape = {1, 5, 9, 8}, .quant = q});
    const ValueId y = g.add_value({.name = "y", .dtype = type, .shape = {1, 5, 5, 4}, .quant = q});
    g.add_node({.name = "pool",
                .op = "MaxPool",
                .inputs = {x},
                .outputs = {y},
                .attributes = {{"kernel_shape", std::vector<int64_t>{3, 3}},
                               {"strides", std::vector<int64_t>{2, 2}},
                               {"pads", std::vector<int64_t>{1, 1, 1, 0}}}});
    g.mark_output(y);
    const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
    EXPECT_EQ(fast.kernel_set_of(g.order()[0]), KernelSet::kReference) << fast.summary();
    expect_fast_equals_reference(g, {codes(type, {1, 5, 9, 8}, 12)});
  }
}

// x → int8 Conv 1×1 → c → c·Sigmoid(GlobalAveragePool(c)) (a squeeze-and-excitation gate,
// per channel) → HardSwish → + c → MaxPool 3×3 → SiLU → int8 Conv 1×1: the values between the two fast
// Convs are channels-last, and the loops read and write NHWC. The Convs' weights are
// multiples of 16 under a multiplier of 1/16, so every Conv output is an integer before
// rounding and oneDNN's int8 Conv (with int8 dot products) equals the reference one exactly,
// as the exact f32 one does anyway: the whole graph must be bit-identical.
TEST(FastInteger, LoopsBetweenInt8ConvsRunChannelsLastWithTheReferenceIntegers) {
  Graph g;
  const Shape image{1, 16, 6, 6};
  const Quantization q = per_tensor(0.0625f, 3);
  auto value = [&](const char* name, Shape shape, Quantization quant) {
    return g.add_value({.name = name, .dtype = kI8, .shape = std::move(shape), .quant = std::move(quant)});
  };
  auto conv = [&](const char* name, ValueId in, uint32_t seed) {
    Tensor w(kI8, {16, 16, 1, 1});
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(-2, 2);
    for (int64_t i = 0; i < w.elements(); ++i)
      w.data<int8_t>()[static_cast<size_t>(i)] = static_cast<int8_t>(16 * d(rng));
    const ValueId wv = g.add_constant(std::string(name) + ".w", w);
    g.value(wv).quant = per_tensor(1.0f / 16.0f, 0);  // s_x · s_w / s_y = 1/16
    const ValueId out = value(name, image, q);
    g.add_node({.name = name, .op = "Conv", .inputs = {in, wv}, .outputs = {out}});
    return out;
  };
  const ValueId x = g.add_input({.name = "x", .dtype = kI8, .shape = image, .quant = q});
  const ValueId c = conv("c1", x, 7);
  const ValueId gap = value("gap", {1, 16, 1, 1}, per_tensor(0.03f, -2));
  g.add_node({.name = "gap", .op = "GlobalAveragePool", .inputs = {c}, .outputs = {gap}});
  const ValueId gate = value("gate", {1, 16, 1, 1}, per_tensor(1.0f / 256.0f, -128));
  g.add_node({.name = "sigmoid", .op = "Sigmoid", .inputs = {gap}, .outputs = {gate}});
  const ValueId scaled = value("scaled", image, per_tensor(0.05f, 1));
  g.add_node({.name = "excite", .op = "Mul", .inputs = {c, gate}, .outputs = {scaled}});
  const ValueId act = value("act", image, per_tensor(0.05f, -100));
  g.add_node({.name = "hardswish", .op = "HardSwish", .inputs = {scaled}, .outputs = {act}});
  const ValueId sum = value("sum", image, per_tensor(0.07f, 9));
  g.add_node({.name = "residual", .op = "Add", .inputs = {act, c}, .outputs = {sum}});
  const ValueId pool = value("pool", image, per_tensor(0.07f, 9));
  g.add_node(
      {.name = "pool",
       .op = "MaxPool",
       .inputs = {sum},
       .outputs = {pool},
       .attributes = {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  // A SiLU as exported, Mul(x, Sigmoid(x)): one table in the Mul, the Sigmoid skipped.
  const ValueId sig = value("sig", image, per_tensor(1.0f / 256.0f, -128));
  g.add_node({.name = "silu.gate", .op = "Sigmoid", .inputs = {pool}, .outputs = {sig}});
  const ValueId silu = value("silu", image, q);
  g.add_node({.name = "silu", .op = "Mul", .inputs = {sig, pool}, .outputs = {silu}});
  const ValueId y = conv("c2", silu, 8);
  g.mark_output(y);

  const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
  EXPECT_EQ(fast.fast_node_count(), static_cast<int>(g.order().size())) << fast.summary();
  for (ValueId v : {c, scaled, act, sum, pool, silu}) EXPECT_TRUE(fast.channels_last(v)) << g.value(v).name;
  expect_fast_equals_reference(g, {codes(kI8, image, 11)});
  // Nodes asked to run on the reference kernels (what a fit within a capacity asks,
  // verify/fit_arena.h) do, with the op table's contracts; the others stay fast where the byte
  // order the layout then picks allows (the Mul on the reference kernels leaves the pool
  // row-major, where its fast loop does not run), and the integers are the same.
  const std::vector<std::string> asked{"excite", "c2"};
  const ExecOptions mixed{.kernels = KernelSet::kFast, .threads = 1, .reference_nodes = asked};
  const Executor part(g, mixed);
  for (NodeId id : g.order()) {
    const bool is_asked = std::find(asked.begin(), asked.end(), g.node(id).name) != asked.end();
    const bool row_major_pool = g.node(id).name == "pool";
    EXPECT_EQ(part.kernel_set_of(id), is_asked || row_major_pool ? KernelSet::kReference : KernelSet::kFast)
        << g.node(id).name;
    if (is_asked) {
      const KernelContract mine = contract_source(mixed)(g, id, builtin_profile("host"));
      const KernelContract table = contract_source({.kernels = KernelSet::kReference})(g, id, builtin_profile("host"));
      EXPECT_EQ(mine.workspace_bytes, table.workspace_bytes) << g.node(id).name;
      EXPECT_EQ(mine.overwritable_inputs, table.overwritable_inputs) << g.node(id).name;
    }
  }
  expect_fast_equals_reference(g, {codes(kI8, image, 11)}, asked);
  // A name that is no node's is refused, naming it, rather than silently running all fast.
  const ExecOptions typo{.kernels = KernelSet::kFast, .threads = 1, .reference_nodes = {"excite", "c3"}};
  try {
    const Executor wrong(g, typo);
    ADD_FAILURE() << "a reference node that does not exist was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no node named 'c3'"), std::string::npos) << e.what();
  }
}

// The exact f32 Conv (TFLite's fixed-point rule here, so on every machine) keeps every sum
// under 2^24: 1×1 over 520 channels of weights 126 (255·Σ|w| = 16.7 M) in one convolution; over
// 521 channels of weights 127 (16.87 M, odd: no float holds it) in two channel ranges summed in
// int32; over 4,200 channels (136 M: 9 ranges) not at all — the reference kernel runs it. Each
// with an input of all 255 (the largest sums) and a random one, equal to the reference.
TEST(FastInteger, TheExactConvKeepsEverySumUnderTwoToThe24) {
  struct Case {
    int64_t channels;
    int magnitude;
    bool fast;
  };
  for (const Case c : {Case{520, 126, true}, Case{521, 127, true}, Case{4200, 127, false}}) {
    SCOPED_TRACE(fmt::format("{} channels of {}", c.channels, c.magnitude));
    Graph g;
    g.requantization = kFixed;
    const int64_t C = c.channels;
    Tensor w(kI8, {2, C, 1, 1});
    for (int64_t i = 0; i < w.elements(); ++i)  // map 0 all +magnitude, map 1 alternating
      w.data<int8_t>()[static_cast<size_t>(i)] = static_cast<int8_t>(i < C || i % 2 ? c.magnitude : -c.magnitude);
    const ValueId x = g.add_input({.name = "x", .dtype = kU8, .shape = {1, C, 2, 2}, .quant = per_tensor(0.01f, 0)});
    const ValueId wv = g.add_constant("w", w);
    g.value(wv).quant = per_tensor(0.001f, 0);
    const ValueId y = g.add_value({.name = "y", .dtype = kU8, .shape = {1, 2, 2, 2}, .quant = per_tensor(1.5f, 100)});
    g.add_node({.name = "conv", .op = "Conv", .inputs = {x, wv}, .outputs = {y}});
    g.mark_output(y);
    const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
    EXPECT_EQ(fast.kernel_set_of(g.order()[0]), c.fast ? KernelSet::kFast : KernelSet::kReference) << fast.summary();
    Tensor full(kU8, {1, C, 2, 2});
    for (int64_t i = 0; i < full.elements(); ++i) full.data<uint8_t>()[static_cast<size_t>(i)] = 255;
    expect_fast_equals_reference(g, {full});
    expect_fast_equals_reference(g, {codes(kU8, {1, C, 2, 2}, 6)});
  }
}

// An int8 Gemm (per-column weight scales, int32 bias, transB either way) runs fast on every
// machine: as oneDNN's int8 convolution over its rows where the machine has int8 dot products,
// else as the exact f32 convolution; either way bit-identical to the reference kernel (both
// add the output's zero point before rounding), in its arena too.
TEST(FastInteger, GemmRunsFastOnEveryMachine) {
  for (const bool trans_b : {true, false}) {
    SCOPED_TRACE(trans_b ? "transB" : "B as [K, N]");
    Graph g;
    const int64_t M = 3, K = 40, N = 24;
    Quantization bq{.scales = {}, .zero_points = {}, .axis = trans_b ? 0 : 1};
    for (int64_t j = 0; j < N; ++j) {
      bq.scales.push_back(0.002f * static_cast<float>(j + 1));
      bq.zero_points.push_back(0);
    }
    Tensor c(DType::kInt32, {N});
    for (int64_t j = 0; j < N; ++j) c.data<int32_t>()[static_cast<size_t>(j)] = static_cast<int32_t>(100 * j - 900);
    const ValueId a = g.add_input({.name = "a", .dtype = kU8, .shape = {M, K}, .quant = per_tensor(0.05f, 131)});
    const ValueId b = g.add_constant("b", codes(kI8, trans_b ? Shape{N, K} : Shape{K, N}, 3));
    g.value(b).quant = bq;
    const ValueId cv = g.add_constant("c", c);
    const ValueId y = g.add_value({.name = "y", .dtype = kU8, .shape = {M, N}, .quant = per_tensor(0.1f, 120)});
    g.add_node({.name = "gemm",
                .op = "Gemm",
                .inputs = {a, b, cv},
                .outputs = {y},
                .attributes = {{"transB", int64_t{trans_b ? 1 : 0}}}});
    g.mark_output(y);
    const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
    EXPECT_EQ(fast.kernel_set_of(g.order()[0]), KernelSet::kFast) << fast.summary();
    EXPECT_NE(fast.summary().find("on 1 of 1"), std::string::npos) << fast.summary();
    expect_fast_equals_reference(g, {codes(kU8, {M, K}, 4)});
  }
}

}  // namespace
}  // namespace memledger
