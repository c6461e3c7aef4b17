// The integer kernels (exec/kernels_quantized_*.cpp) on hand-made graphs against a plain
// scalar formula written here: the int32 sum in int64 loops, then the rule's rounding.
// Per-channel and per-tensor weights, int8 and uint8, padding, stride, dilation, groups,
// depthwise in place inside an arena, saturation; and the fast executor sending integer
// nodes to the reference kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "exec/fast/isa.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/ir/op_table.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {
namespace {

Quantization per_tensor(float scale, int64_t zero_point) { return {.scales = {scale}, .zero_points = {zero_point}}; }

int32_t lo_of(DType t) { return t == DType::kUInt8 ? 0 : -128; }
int32_t hi_of(DType t) { return t == DType::kUInt8 ? 255 : 127; }

// Seeded 8-bit codes over the whole range of `type`.
Tensor codes(DType type, Shape shape, uint32_t seed) {
  Tensor t(type, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(lo_of(type), hi_of(type));
  for (int64_t i = 0; i < t.elements(); ++i) {
    if (type == DType::kInt8)
      t.data<int8_t>()[static_cast<size_t>(i)] = static_cast<int8_t>(d(rng));
    else
      t.data<uint8_t>()[static_cast<size_t>(i)] = static_cast<uint8_t>(d(rng));
  }
  return t;
}
int32_t code(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? t.data<int8_t>()[static_cast<size_t>(i)]
                                   : t.data<uint8_t>()[static_cast<size_t>(i)];
}

// The expected output integer of an int32 sum `acc` under multiplier m (float-scale rule):
// acc · m plus the zero point in float, then rounded half to even.
int32_t float_rule(int64_t acc, float m, int64_t zero_point, DType type) {
  const float sum = static_cast<float>(acc) * m + static_cast<float>(zero_point);
  const double v = std::nearbyint(static_cast<double>(sum));
  return static_cast<int32_t>(std::clamp<double>(v, lo_of(type), hi_of(type)));
}
// The exact rational result rounded half away from zero (fixed point is within 1 of it).
int32_t exact_rule(int64_t acc, double m, int64_t zero_point, DType type) {
  const double v = std::round(static_cast<double>(acc) * m) + static_cast<double>(zero_point);
  return static_cast<int32_t>(std::clamp<double>(v, lo_of(type), hi_of(type)));
}

struct ConvCase {
  const char* name;
  Shape x;  // [N, C, H, W] or [N, C, W]
  int64_t maps, group;
  std::vector<int64_t> kernel, strides, dilations, pads;
  DType x_type, w_type, y_type;
  bool per_channel;
  Requantization rule;
  float y_scale = 0.05f;  // small: many outputs saturate
};

Shape conv_out(const ConvCase& c) {
  Shape y{c.x[0], c.maps};
  const size_t s = c.kernel.size();
  for (size_t i = 0; i < s; ++i)
    y.push_back((c.x[2 + i] + c.pads[i] + c.pads[s + i] - c.dilations[i] * (c.kernel[i] - 1) - 1) / c.strides[i] + 1);
  return y;
}

struct ConvGraph {
  Graph g;
  Quantization xq, wq, yq;
  Tensor w, b;
};

ConvGraph conv_graph(const ConvCase& c) {
  ConvGraph r;
  Graph& g = r.g;
  g.requantization = c.rule;
  r.xq = per_tensor(0.02f, c.x_type == DType::kUInt8 ? 131 : -7);
  r.yq = per_tensor(c.y_scale, c.y_type == DType::kUInt8 ? 120 : 3);
  const int64_t cg = c.x[1] / c.group;
  Shape ws{c.maps, cg};
  ws.insert(ws.end(), c.kernel.begin(), c.kernel.end());
  r.w = codes(c.w_type, ws, 11);
  if (c.per_channel) {
    r.wq.axis = 0;
    for (int64_t m = 0; m < c.maps; ++m) {
      r.wq.scales.push_back(0.001f * static_cast<float>(m + 1));
      r.wq.zero_points.push_back(c.w_type == DType::kUInt8 ? 128 : 0);
    }
  } else {
    r.wq = per_tensor(0.003f, c.w_type == DType::kUInt8 ? 125 : 0);
  }
  r.b = Tensor(DType::kInt32, {c.maps});
  for (int64_t m = 0; m < c.maps; ++m) r.b.data<int32_t>()[static_cast<size_t>(m)] = static_cast<int32_t>(m * 37 - 90);
  const ValueId x = g.add_input({.name = "x", .dtype = c.x_type, .shape = c.x, .quant = r.xq});
  const ValueId w = g.add_constant("w", r.w);
  g.value(w).quant = r.wq;
  const ValueId b = g.add_constant("b", r.b);
  const ValueId y = g.add_value({.name = "y", .dtype = c.y_type, .shape = conv_out(c), .quant = r.yq});
  g.add_node({.name = "conv",
              .op = "Conv",
              .inputs = {x, w, b},
              .outputs = {y},
              .attributes = {{"group", c.group},
                             {"kernel_shape", c.kernel},
                             {"strides", c.strides},
                             {"dilations", c.dilations},
                             {"pads", c.pads}}});
  g.mark_output(y);
  return r;
}

// The Conv of `c` by its definition, one output at a time.
std::vector<int32_t> conv_reference(const ConvCase& c, const ConvGraph& r, const Tensor& x) {
  const Shape y = conv_out(c);
  const size_t s = c.kernel.size();
  const int64_t H = s == 2 ? c.x[2] : 1, W = c.x.back(), OH = s == 2 ? y[2] : 1, OW = y.back();
  const int64_t KH = s == 2 ? c.kernel[0] : 1, KW = c.kernel.back();
  const int64_t SH = s == 2 ? c.strides[0] : 1, SW = c.strides.back(), DH = s == 2 ? c.dilations[0] : 1,
                DW = c.dilations.back();
  const int64_t PH = s == 2 ? c.pads[0] : 0, PW = c.pads[s - 1];
  const int64_t C = c.x[1], cg = C / c.group, mg = c.maps / c.group;
  std::vector<int32_t> out;
  for (int64_t n = 0; n < c.x[0]; ++n)
    for (int64_t m = 0; m < c.maps; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t acc = r.b.data<int32_t>()[static_cast<size_t>(m)];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * SH - PH + kh * DH, iw = ow * SW - PW + kw * DW;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const int64_t channel = (m / mg) * cg + ci;
                const int64_t xv = code(x, ((n * C + channel) * H + ih) * W + iw) - r.xq.zero_point();
                const int64_t wv = code(r.w, ((m * cg + ci) * KH + kh) * KW + kw) - r.wq.zero_point(m);
                acc += xv * wv;
              }
          if (c.rule == Requantization::kFloatScale)
            out.push_back(float_rule(acc, r.xq.scale() * r.wq.scale(m) / r.yq.scale(), r.yq.zero_point(), c.y_type));
          else
            out.push_back(
                exact_rule(acc, static_cast<double>(r.xq.scale()) * r.wq.scale(m) / static_cast<double>(r.yq.scale()),
                           r.yq.zero_point(), c.y_type));
        }
  return out;
}

constexpr auto kI8 = DType::kInt8;
constexpr auto kU8 = DType::kUInt8;
constexpr auto kFloat = Requantization::kFloatScale;
constexpr auto kFixed = Requantization::kFixedPoint;

const ConvCase kConvCases[] = {
    {"3x3 per-channel padded", {1, 5, 9, 8}, 6, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, kI8, kI8, kI8, true, kFloat},
    {"3x3 stride 2 uint8 in/out",
     {1, 4, 11, 10},
     5,
     1,
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 0, 1, 2},
     kU8,
     kI8,
     kU8,
     true,
     kFloat},
    {"5x3 dilation 2 per-tensor uint8 weights",
     {2, 3, 12, 9},
     4,
     1,
     {3, 3},
     {1, 2},
     {2, 2},
     {2, 1, 2, 1},
     kI8,
     kU8,
     kI8,
     false,
     kFloat},
    {"depthwise 3x3 stride 1", {1, 8, 7, 9}, 8, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, kI8, kI8, kI8, true, kFloat},
    {"depthwise 3x3 stride 2 uint8",
     {1, 6, 10, 10},
     6,
     6,
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1},
     kU8,
     kI8,
     kU8,
     true,
     kFloat},
    {"grouped 2 groups", {1, 6, 6, 6}, 4, 2, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, kI8, kI8, kI8, true, kFloat},
    {"channel multiplier 2 (direct)",
     {1, 3, 6, 7},
     6,
     3,
     {3, 3},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0},
     kI8,
     kI8,
     kI8,
     true,
     kFloat},
    {"pointwise", {1, 16, 5, 5}, 7, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, kI8, kI8, kI8, true, kFloat},
    {"1-D k=5 wide row (chunks)", {1, 2, 300}, 3, 1, {5}, {1}, {1}, {2, 2}, kI8, kI8, kI8, true, kFloat},
    {"fixed point 3x3 per-channel",
     {1, 5, 9, 8},
     6,
     1,
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     kI8,
     kI8,
     kI8,
     true,
     kFixed},
    {"fixed point depthwise uint8",
     {1, 6, 10, 10},
     6,
     6,
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1},
     kU8,
     kI8,
     kU8,
     true,
     kFixed},
    {"saturating: tiny output scale",
     {1, 4, 6, 6},
     3,
     1,
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1},
     kI8,
     kI8,
     kI8,
     true,
     kFloat,
     0.0005f},
};

TEST(QuantizedConv, MatchesTheScalarFormula) {
  for (const ConvCase& c : kConvCases) {
    SCOPED_TRACE(c.name);
    const ConvGraph r = conv_graph(c);
    const Tensor x = codes(c.x_type, c.x, 5);
    const std::vector<Tensor> y = run_graph(r.g, {x}, {.kernels = KernelSet::kReference});
    const std::vector<int32_t> expected = conv_reference(c, r, x);
    ASSERT_EQ(y[0].dtype(), c.y_type);
    ASSERT_EQ(static_cast<size_t>(y[0].elements()), expected.size());
    int saturated = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      const int32_t got = code(y[0], static_cast<int64_t>(i));
      saturated += got == lo_of(c.y_type) || got == hi_of(c.y_type);
      if (c.rule == kFloat)
        ASSERT_EQ(got, expected[i]) << "element " << i;
      else
        ASSERT_LE(std::abs(got - expected[i]), 1) << "element " << i;
    }
    if (c.y_scale < 0.001f) {
      EXPECT_GT(saturated, static_cast<int>(expected.size()) / 2);
    }
  }
}

TEST(QuantizedConv, ContractDeclaresOnlyTheDepthwisePlane) {
  const DeviceProfile host = builtin_profile("host");
  for (const ConvCase& c : kConvCases) {
    SCOPED_TRACE(c.name);
    const ConvGraph r = conv_graph(c);
    const KernelContract contract = op_contract(r.g, r.g.order()[0], host);
    const Shape y = conv_out(c);
    if (c.group == c.x[1] && c.maps == c.x[1]) {
      const int64_t plane = y[2] * (y.size() > 3 ? y[3] : 1);  // one byte per element
      EXPECT_EQ(contract.workspace_bytes, (plane + 63) / 64 * 64);
      EXPECT_EQ(contract.overwritable_inputs, std::vector<int>{0});
    } else {
      EXPECT_EQ(contract.workspace_bytes, 0);
    }
  }
}

// x → Relu (int8, same parameters) → depthwise Conv → y: the Conv's output is planned over
// its input and the arena run is bit-identical to the heap run, the plane workspace used.
TEST(QuantizedConv, DepthwiseRunsInPlaceInsideItsArena) {
  for (const ConvCase& c : {kConvCases[3], kConvCases[4], kConvCases[10]}) {
    SCOPED_TRACE(c.name);
    ConvGraph r = conv_graph(c);
    Graph& g = r.g;
    const NodeId conv = g.order()[0];
    const ValueId x = g.node(conv).inputs[0];
    const ValueId rx = g.add_value({.name = "r", .dtype = c.x_type, .shape = c.x, .quant = r.xq});
    g.insert_node_before(conv, {.name = "relu", .op = "Relu", .inputs = {x}, .outputs = {rx}});
    g.set_input(conv, 0, rx);
    const MemoryPlan plan = plan_memory(g, with_model_dtypes(builtin_profile("host")));
    const LiveBuffer* y = nullptr;
    for (const LiveBuffer& b : plan.liveness.buffers)
      if (b.name == "y") y = &b;
    ASSERT_NE(y, nullptr);
    ASSERT_TRUE(y->alias_of.has_value());
    EXPECT_EQ(plan.liveness.buffers[static_cast<size_t>(*y->alias_of)].name, "r");
    const std::vector<Tensor> inputs{codes(c.x_type, c.x, 9)};
    const ArenaRunReport report = run_in_arena(g, plan, inputs);
    std::string why = report.failure;
    for (const auto& v : report.violations) why += "\n" + v.message;
    for (const auto& o : report.differing_outputs) why += "\n" + o;
    EXPECT_TRUE(report.clean()) << why;
    EXPECT_TRUE(report.untouched_workspaces.empty());
    EXPECT_EQ(report.outputs.at(0).dtype(), c.y_type);
  }
}

// The fast set runs an integer Conv with int8 weights (zero point 0) on every machine: as
// oneDNN's int8 convolution where the machine has int8 dot products (exec/fast/isa.h) and the
// rule is the float-scale one; otherwise as an exact f32 convolution with the reference's
// requantization. Either way equal to the definition (oneDNN, too, adds the output's zero
// point before it rounds). Either way its arena run is clean. Run once more
// under ONEDNN_MAX_CPU_ISA=AVX2 by scripts/test.sh, where no VNNI is left.
TEST(QuantizedConv, TheFastConvRunsOnEveryMachine) {
  int int8_cases = 0, exact_cases = 0;
  for (const ConvCase& c : kConvCases) {
    SCOPED_TRACE(c.name);
    const ConvGraph r = conv_graph(c);
    const Executor fast(r.g, {.kernels = KernelSet::kFast, .threads = 1});
    const bool fast_conv = c.w_type == kI8;
    const bool int8_conv = fast_conv && exec::fast::has_int8_dot_products() && c.rule == kFloat;
    EXPECT_EQ(fast.kernel_set_of(r.g.order()[0]), fast_conv ? KernelSet::kFast : KernelSet::kReference)
        << fast.summary();
    int8_cases += int8_conv;
    exact_cases += fast_conv && !int8_conv;
    const Tensor x = codes(c.x_type, c.x, 5);
    const std::vector<Tensor> a = run_graph(r.g, {x}, {.kernels = KernelSet::kFast});
    const std::vector<int32_t> want = conv_reference(c, r, x);
    ASSERT_EQ(a[0].elements(), static_cast<int64_t>(want.size()));
    for (int64_t i = 0; i < a[0].elements(); ++i) {
      const int32_t d = std::abs(code(a[0], i) - want[static_cast<size_t>(i)]);
      ASSERT_LE(d, c.rule == kFixed ? 1 : 0) << "output " << i;
    }
    if (fast_conv) {  // either fast Conv: the reference kernel's very integers
      const std::vector<Tensor> ref = run_graph(r.g, {x}, {.kernels = KernelSet::kReference});
      for (int64_t i = 0; i < a[0].elements(); ++i) ASSERT_EQ(code(a[0], i), code(ref[0], i)) << "output " << i;
    }
    const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1};
    const MemoryPlan plan = plan_for_kernels(r.g, builtin_profile("host"), exec);
    const ArenaRunReport report = run_in_arena(r.g, plan, {x}, exec);
    EXPECT_TRUE(report.clean()) << report.failure;
    EXPECT_TRUE(report.untouched_workspaces.empty());
  }
  EXPECT_GE(int8_cases + exact_cases, 3);
  if (exec::fast::has_int8_dot_products()) {
    EXPECT_GE(int8_cases, 3);
  }
  // int8 weights with a zero point other than 0 (neither fast Conv takes them): the reference
  // kernel runs the node, exactly as defined.
  ConvGraph r = conv_graph(kConvCases[0]);
  for (int64_t& z : r.wq.zero_points) z = 3;
  r.g.value(r.g.node(r.g.order()[0]).inputs[1]).quant = r.wq;
  const Executor fast(r.g, {.kernels = KernelSet::kFast, .threads = 1});
  EXPECT_EQ(fast.kernel_set_of(r.g.order()[0]), KernelSet::kReference) << fast.summary();
  const Tensor x = codes(kI8, kConvCases[0].x, 5);
  const std::vector<Tensor> a = run_graph(r.g, {x}, {.kernels = KernelSet::kFast});
  const std::vector<int32_t> want = conv_reference(kConvCases[0], r, x);
  for (int64_t i = 0; i < a[0].elements(); ++i) ASSERT_EQ(code(a[0], i), want[static_cast<size_t>(i)]) << i;
}

TEST(QuantizedConv, ChecksRefuseWhatTheKernelCannotRun) {
  auto reason = [](const ConvGraph& r) { return unsupported_reason(r.g, r.g.order()[0]); };
  {
    ConvGraph r = conv_graph(kConvCases[0]);
    r.g.value(r.g.node(r.g.order()[0]).inputs[2]).dtype = DType::kFloat32;
    EXPECT_NE(reason(r).find("not int32"), std::string::npos) << reason(r);
  }
  {
    ConvGraph r = conv_graph(kConvCases[0]);
    r.g.value(r.g.inputs()[0]).quant->scales[0] = 0.0f;
    EXPECT_NE(reason(r).find("scale 0"), std::string::npos) << reason(r);
  }
  {
    ConvGraph r = conv_graph(kConvCases[0]);
    r.g.value(r.g.inputs()[0]).quant->zero_points[0] = 300;
    EXPECT_NE(reason(r).find("zero point 300"), std::string::npos) << reason(r);
  }
  {
    ConvGraph r = conv_graph(kConvCases[0]);
    r.g.value(r.g.node(r.g.order()[0]).inputs[1]).quant->scales.pop_back();
    r.g.value(r.g.node(r.g.order()[0]).inputs[1]).quant->zero_points.pop_back();
    EXPECT_NE(reason(r).find("per-axis"), std::string::npos) << reason(r);
  }
  {
    ConvGraph r = conv_graph(kConvCases[0]);
    r.g.value(r.g.outputs()[0]).quant.reset();  // input quantized, output not
    EXPECT_NE(reason(r).find("no quantization"), std::string::npos) << reason(r);
  }
}

// ---- Gemm, MatMul ----

TEST(QuantizedMatmul, GemmPerColumnAndMatMulMatchTheFormula) {
  for (const bool trans_b : {true, false}) {
    SCOPED_TRACE(trans_b ? "Gemm transB" : "MatMul");
    Graph g;
    const int64_t M = 3, K = 37, N = 5;
    const Quantization aq = per_tensor(0.05f, 12), yq = per_tensor(0.1f, -4);
    Quantization bq{.scales = {}, .zero_points = {}, .axis = trans_b ? 0 : 1};
    for (int64_t j = 0; j < N; ++j) {
      bq.scales.push_back(0.002f * static_cast<float>(j + 1));
      bq.zero_points.push_back(0);
    }
    const Tensor b = codes(kI8, trans_b ? Shape{N, K} : Shape{K, N}, 3);
    Tensor c(DType::kInt32, {N});
    for (int64_t j = 0; j < N; ++j) c.data<int32_t>()[static_cast<size_t>(j)] = static_cast<int32_t>(100 * j - 200);
    const ValueId a = g.add_input({.name = "a", .dtype = kI8, .shape = {M, K}, .quant = aq});
    const ValueId bv = g.add_constant("b", b);
    g.value(bv).quant = bq;
    const ValueId y = g.add_value({.name = "y", .dtype = kI8, .shape = {M, N}, .quant = yq});
    if (trans_b) {
      const ValueId cv = g.add_constant("c", c);
      g.add_node({.name = "gemm", .op = "Gemm", .inputs = {a, bv, cv}, .outputs = {y}, .attributes = {{"transB", 1}}});
    } else {
      g.add_node({.name = "mm", .op = "MatMul", .inputs = {a, bv}, .outputs = {y}});
    }
    g.mark_output(y);
    const Tensor av = codes(kI8, {M, K}, 4);
    const std::vector<Tensor> out = run_graph(g, {av}, {.kernels = KernelSet::kFast});
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        int64_t acc = trans_b ? c.data<int32_t>()[static_cast<size_t>(j)] : 0;
        for (int64_t k = 0; k < K; ++k) acc += (code(av, i * K + k) - 12) * code(b, trans_b ? j * K + k : k * N + j);
        ASSERT_EQ(code(out[0], i * N + j), float_rule(acc, aq.scale() * bq.scale(j) / yq.scale(), -4, kI8))
            << i << "," << j;
      }
  }
}

// ---- Add, Mul, Concat, pools, activations ----

Graph binary_graph(const char* op, DType type, const Quantization& aq, const Quantization& bq, const Quantization& yq,
                   Requantization rule) {
  Graph g;
  g.requantization = rule;
  const ValueId a = g.add_input({.name = "a", .dtype = type, .shape = {1, 4, 3, 5}, .quant = aq});
  const ValueId b = g.add_input({.name = "b", .dtype = type, .shape = {1, 4, 1, 1}, .quant = bq});
  const ValueId y = g.add_value({.name = "y", .dtype = type, .shape = {1, 4, 3, 5}, .quant = yq});
  g.add_node({.name = "op", .op = op, .inputs = {a, b}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

TEST(QuantizedElementwise, AddAndMulBroadcastAndMatchTheFormula) {
  for (const DType type : {kI8, kU8})
    for (const Requantization rule : {kFloat, kFixed})
      for (const bool mul : {false, true}) {
        SCOPED_TRACE(std::string(mul ? "Mul " : "Add ") + std::string(dtype_name(type)) + " " +
                     std::string(to_string(rule)));
        const int64_t z = type == kU8 ? 128 : 0;
        const Quantization aq = per_tensor(0.03f, z + 5), bq = per_tensor(0.07f, z - 9), yq = per_tensor(0.05f, z + 2);
        const Graph g = binary_graph(mul ? "Mul" : "Add", type, aq, bq, yq, rule);
        const Tensor a = codes(type, {1, 4, 3, 5}, 1), b = codes(type, {1, 4, 1, 1}, 2);
        const std::vector<Tensor> y = run_graph(g, std::vector<Tensor>{a, b}, {.kernels = KernelSet::kReference});
        for (int64_t i = 0; i < 60; ++i) {
          const double ra = aq.scale() * (code(a, i) - aq.zero_point());
          const double rb = bq.scale() * (code(b, i / 15) - bq.zero_point());
          const double real = mul ? ra * rb : ra + rb;
          const double exact =
              std::clamp<double>(std::round(real / yq.scale()) + yq.zero_point(), lo_of(type), hi_of(type));
          ASSERT_LE(std::abs(code(y[0], i) - exact), 1) << "element " << i;
        }
      }
}

TEST(QuantizedElementwise, ConcatRequantizesEachInput) {
  Graph g;
  const Quantization q1 = per_tensor(0.1f, 3), q2 = per_tensor(0.05f, -10);
  const ValueId a = g.add_input({.name = "a", .dtype = kI8, .shape = {1, 2, 3}, .quant = q1});
  const ValueId b = g.add_input({.name = "b", .dtype = kI8, .shape = {1, 3, 3}, .quant = q2});
  const ValueId y = g.add_value({.name = "y", .dtype = kI8, .shape = {1, 5, 3}, .quant = q1});
  g.add_node({.name = "cat", .op = "Concat", .inputs = {a, b}, .outputs = {y}, .attributes = {{"axis", 1}}});
  g.mark_output(y);
  const Tensor av = codes(kI8, {1, 2, 3}, 1), bv = codes(kI8, {1, 3, 3}, 2);
  const std::vector<Tensor> out = run_graph(g, std::vector<Tensor>{av, bv}, {.kernels = KernelSet::kReference});
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(code(out[0], i), code(av, i));  // same parameters: copied
  for (int64_t i = 0; i < 9; ++i)
    EXPECT_EQ(code(out[0], 6 + i), float_rule(code(bv, i) + 10, 0.05f / 0.1f, 3, kI8)) << i;
}

TEST(QuantizedElementwise, PoolsAverageInInt32) {
  for (const char* op : {"AveragePool", "GlobalAveragePool", "ReduceMean"}) {
    SCOPED_TRACE(op);
    Graph g;
    const Quantization xq = per_tensor(0.02f, 7), yq = per_tensor(0.015f, -3);
    const bool reduce = std::string(op) == "ReduceMean";
    const bool global = reduce || std::string(op) == "GlobalAveragePool";
    const Shape ys = global ? Shape{1, 3, 1, 1} : Shape{1, 3, 3, 3};
    const ValueId x = g.add_input({.name = "x", .dtype = kI8, .shape = {1, 3, 6, 6}, .quant = xq});
    const ValueId y = g.add_value({.name = "y", .dtype = kI8, .shape = reduce ? Shape{1, 3} : ys, .quant = yq});
    Attributes attrs;
    if (!global)
      attrs = {{"kernel_shape", std::vector<int64_t>{3, 3}},
               {"strides", std::vector<int64_t>{2, 2}},
               {"pads", std::vector<int64_t>{1, 1, 0, 0}}};
    if (reduce) attrs = {{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t{0}}};
    g.add_node({.name = "pool", .op = op, .inputs = {x}, .outputs = {y}, .attributes = attrs});
    g.mark_output(y);
    const Tensor xv = codes(kI8, {1, 3, 6, 6}, 8);
    const std::vector<Tensor> out = run_graph(g, {xv}, {.kernels = KernelSet::kFast});
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t oh = 0; oh < ys[2]; ++oh)
        for (int64_t ow = 0; ow < ys[3]; ++ow) {
          int64_t sum = 0, count = 0;
          for (int64_t ih = 0; ih < 6; ++ih)
            for (int64_t iw = 0; iw < 6; ++iw) {
              const bool inside =
                  global || (ih >= oh * 2 - 1 && ih < oh * 2 + 2 && iw >= ow * 2 - 1 && iw < ow * 2 + 2);
              if (!inside) continue;
              sum += code(xv, (c * 6 + ih) * 6 + iw) - 7;
              ++count;
            }
          const float m = 0.02f / (0.015f * static_cast<float>(count));
          ASSERT_EQ(code(out[0], (c * ys[2] + oh) * ys[3] + ow), float_rule(sum, m, -3, kI8)) << c << oh << ow;
        }
  }
}

TEST(QuantizedElementwise, ActivationsByTableMatchTheFloatFunction) {
  struct Act {
    const char* op;
    float (*f)(float);
  };
  const Act acts[] = {
      {"Relu", [](float x) { return std::max(x, 0.0f); }},
      {"Sigmoid", [](float x) { return 1.0f / (1.0f + std::exp(-x)); }},
      {"HardSwish", [](float x) { return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); }},
      {"HardSigmoid", [](float x) { return std::clamp(0.2f * x + 0.5f, 0.0f, 1.0f); }},
      {"LeakyRelu", [](float x) { return x >= 0 ? x : 0.01f * x; }},
  };
  for (const DType type : {kI8, kU8})
    for (const Act& act : acts) {
      SCOPED_TRACE(std::string(act.op) + " " + std::string(dtype_name(type)));
      Graph g;
      const Quantization xq = per_tensor(0.05f, type == kU8 ? 128 : 0), yq = per_tensor(0.01f, type == kU8 ? 60 : -70);
      const ValueId x = g.add_input({.name = "x", .dtype = type, .shape = {256}, .quant = xq});
      const ValueId y = g.add_value({.name = "y", .dtype = type, .shape = {256}, .quant = yq});
      g.add_node({.name = "act", .op = act.op, .inputs = {x}, .outputs = {y}});
      g.mark_output(y);
      Tensor xv(type, {256});
      for (int i = 0; i < 256; ++i) {
        if (type == kI8)
          xv.data<int8_t>()[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
        else
          xv.data<uint8_t>()[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
      }
      const std::vector<Tensor> out = run_graph(g, {xv}, {.kernels = KernelSet::kFast});
      for (int64_t i = 0; i < 256; ++i) {
        const float real = act.f(xq.scale() * static_cast<float>(code(xv, i) - xq.zero_point()));
        const double expected =
            std::clamp<double>(std::nearbyint(real / yq.scale()) + yq.zero_point(), lo_of(type), hi_of(type));
        ASSERT_EQ(code(out[0], i), expected) << "code " << code(xv, i);
      }
    }
}

TEST(QuantizedElementwise, ClipBoundsFromFloatInputs) {
  Graph g;
  const Quantization q = per_tensor(0.1f, -20);
  const ValueId x = g.add_input({.name = "x", .dtype = kI8, .shape = {256}, .quant = q});
  Tensor lo(DType::kFloat32, {}), hi(DType::kFloat32, {});
  lo.data<float>()[0] = 0.0f;
  hi.data<float>()[0] = 6.0f;
  const ValueId l = g.add_constant("lo", lo), h = g.add_constant("hi", hi);
  const ValueId y = g.add_value({.name = "y", .dtype = kI8, .shape = {256}, .quant = q});
  g.add_node({.name = "clip", .op = "Clip", .inputs = {x, l, h}, .outputs = {y}});
  g.mark_output(y);
  Tensor xv(kI8, {256});
  for (int i = 0; i < 256; ++i) xv.data<int8_t>()[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  const std::vector<Tensor> out = run_graph(g, {xv}, {.kernels = KernelSet::kReference});
  for (int64_t i = 0; i < 256; ++i) ASSERT_EQ(code(out[0], i), std::clamp(code(xv, i), -20, 40)) << i;
}

}  // namespace
}  // namespace memledger
