// The fast set's TFLite CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (exec/fast/
// kernels_tflite_conv.cpp, the exact f32 convolution over NHWC and the file's filter layouts)
// against the reference TFLite kernels: the same bytes on hand-made nodes that reach each
// padding, stride, dilation, multiplier, fused activation and the channel split past 2^24, and on
// every TFLite Micro model in the tree and the shared folder, in the heap and in the fast
// kernels' own arena plan. Run once more under ONEDNN_MAX_CPU_ISA=AVX2 by scripts/test.sh.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "exec/first_difference.h"
#include "memledger/device/profile.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/interpreter.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/tflite/import.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

Quantization per_tensor(float scale, int64_t zero_point) { return {.scales = {scale}, .zero_points = {zero_point}}; }

// Seeded int8 codes over the whole range, or within ±`magnitude`.
Tensor codes(const Shape& shape, uint32_t seed, int32_t magnitude = 128) {
  Tensor t(DType::kInt8, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(-magnitude, std::min(magnitude, 127));
  for (auto& v : t.data<int8_t>()) v = static_cast<int8_t>(d(rng));
  return t;
}

Tensor biases(int64_t count, uint32_t seed) {
  Tensor t(DType::kInt32, {count});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(-20000, 20000);
  for (auto& v : t.data<int32_t>()) v = d(rng);
  return t;
}

// Runs g on both kernel sets: the fast run, and its arena run under the fast kernels' own
// plan, give the reference's bytes; `fast_nodes` of its nodes run fast.
void expect_fast_equals_reference(const Graph& g, const std::vector<Tensor>& inputs, int fast_nodes) {
  const std::vector<Tensor> want = run_graph(g, inputs, {.kernels = KernelSet::kReference});
  const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1};
  Executor fast(g, exec);
  EXPECT_EQ(fast.fast_node_count(), fast_nodes) << fast.summary();
  const std::vector<Tensor> got = fast.run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(first_difference(got[i], want[i]), -1) << "output " << i;
  const MemoryPlan plan = plan_for_kernels(g, builtin_profile("host"), exec);
  const ArenaRunReport report = run_in_arena(g, plan, inputs, exec);
  EXPECT_TRUE(report.clean()) << report.failure;
}

struct ConvCase {
  const char* name;
  const char* op;  // CONV_2D or DEPTHWISE_CONV_2D
  Shape x;         // NHWC
  int64_t out_c, k_h, k_w, stride_h, stride_w, dilation;
  const char* padding;
  const char* activation;
  int64_t multiplier = 1;  // depthwise
  bool per_channel = true;
  bool bias = true;
};

int64_t out_extent(const std::string& padding, int64_t in, int64_t k, int64_t stride, int64_t dilation) {
  const int64_t effective = (k - 1) * dilation + 1;
  return padding == "SAME" ? (in + stride - 1) / stride : (in - effective + stride) / stride;
}

// x int8 NHWC → op (int8 filter constant, int32 bias) → y, under TFLite's fixed-point rule.
Graph conv_graph(const ConvCase& c) {
  Graph g;
  g.requantization = Requantization::kFixedPoint;
  const bool depthwise = std::string(c.op) == "DEPTHWISE_CONV_2D";
  const int64_t out_h = out_extent(c.padding, c.x[1], c.k_h, c.stride_h, c.dilation);
  const int64_t out_w = out_extent(c.padding, c.x[2], c.k_w, c.stride_w, c.dilation);
  const Shape filter = depthwise ? Shape{1, c.k_h, c.k_w, c.out_c} : Shape{c.out_c, c.k_h, c.k_w, c.x[3]};
  Quantization wq;
  for (int64_t m = 0; m < (c.per_channel ? c.out_c : 1); ++m) {
    wq.scales.push_back(0.002f + 0.0003f * static_cast<float>(m % 7));
    wq.zero_points.push_back(0);
  }
  if (c.per_channel) wq.axis = depthwise ? 3 : 0;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kInt8, .shape = c.x, .quant = per_tensor(0.05f, -3)});
  Value w{.name = "w", .dtype = DType::kInt8, .shape = filter, .quant = wq};
  w.constant = SharedTensor(codes(filter, 7));
  std::vector<ValueId> inputs{x, g.add_value(std::move(w))};
  if (c.bias) {
    Value b{.name = "b", .dtype = DType::kInt32, .shape = {c.out_c}};
    b.constant = SharedTensor(biases(c.out_c, 9));
    inputs.push_back(g.add_value(std::move(b)));
  }
  const ValueId y = g.add_value(
      {.name = "y", .dtype = DType::kInt8, .shape = {c.x[0], out_h, out_w, c.out_c}, .quant = per_tensor(0.08f, 5)});
  Node n{.name = "conv", .op = c.op, .domain = "tflite", .inputs = inputs, .outputs = {y}};
  n.attributes["padding"] = Attribute(std::string(c.padding));
  n.attributes["stride_h"] = Attribute(c.stride_h);
  n.attributes["stride_w"] = Attribute(c.stride_w);
  n.attributes["dilation_h_factor"] = Attribute(c.dilation);
  n.attributes["dilation_w_factor"] = Attribute(c.dilation);
  n.attributes["fused_activation_function"] = Attribute(std::string(c.activation));
  if (depthwise) n.attributes["depth_multiplier"] = Attribute(c.multiplier);
  g.add_node(std::move(n));
  g.mark_output(y);
  return g;
}

const ConvCase kConvCases[] = {
    {"3x3 SAME stride 1", "CONV_2D", {1, 9, 11, 5}, 7, 3, 3, 1, 1, 1, "SAME", "NONE"},
    {"3x3 SAME stride 2, odd extents (the odd row at the end)",
     "CONV_2D",
     {1, 9, 10, 4},
     6,
     3,
     3,
     2,
     2,
     1,
     "SAME",
     "RELU6"},
    {"2x3 VALID stride 2 with leftover input", "CONV_2D", {2, 8, 9, 3}, 5, 2, 3, 2, 2, 1, "VALID", "RELU"},
    {"3x3 dilation 2 SAME", "CONV_2D", {1, 12, 12, 4}, 4, 3, 3, 1, 1, 2, "SAME", "NONE"},
    {"1x1 per-tensor, no bias", "CONV_2D", {1, 6, 6, 16}, 8, 1, 1, 1, 1, 1, "VALID", "RELU_N1_TO_1", 1, false, false},
    {"depthwise 3x3 SAME", "DEPTHWISE_CONV_2D", {1, 10, 10, 8}, 8, 3, 3, 1, 1, 1, "SAME", "RELU6"},
    {"depthwise multiplier 2 stride 2", "DEPTHWISE_CONV_2D", {1, 9, 9, 3}, 6, 3, 3, 2, 2, 1, "SAME", "NONE", 2},
    {"depthwise 5x5 VALID per-tensor", "DEPTHWISE_CONV_2D", {1, 11, 7, 4}, 4, 5, 5, 1, 1, 1, "VALID", "RELU", 1, false},
};

TEST(FastTflite, ConvAndDepthwiseGiveTheReferenceKernelsBytes) {
  for (const ConvCase& c : kConvCases) {
    SCOPED_TRACE(c.name);
    const Graph g = conv_graph(c);
    expect_fast_equals_reference(g, {codes(c.x, 3)}, 1);
  }
}

// x int8 [rows..., depth] → FULLY_CONNECTED (weights [units, depth]) → y [rows, units].
Graph fully_connected_graph(const Shape& x_shape, int64_t units, int32_t weight_magnitude, bool per_channel) {
  Graph g;
  g.requantization = Requantization::kFixedPoint;
  const int64_t depth = x_shape.back();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < x_shape.size(); ++i) rows *= x_shape[i];
  Quantization wq;
  for (int64_t m = 0; m < (per_channel ? units : 1); ++m) {
    wq.scales.push_back(0.0004f + 0.00005f * static_cast<float>(m % 5));
    wq.zero_points.push_back(0);
  }
  if (per_channel) wq.axis = 0;
  const ValueId x = g.add_input({.name = "x", .dtype = DType::kInt8, .shape = x_shape, .quant = per_tensor(0.1f, 7)});
  Value w{.name = "w", .dtype = DType::kInt8, .shape = {units, depth}, .quant = wq};
  w.constant = SharedTensor(codes({units, depth}, 11, weight_magnitude));
  Value b{.name = "b", .dtype = DType::kInt32, .shape = {units}};
  b.constant = SharedTensor(biases(units, 13));
  const ValueId wid = g.add_value(std::move(w)), bid = g.add_value(std::move(b));
  const ValueId y =
      g.add_value({.name = "y", .dtype = DType::kInt8, .shape = {rows, units}, .quant = per_tensor(0.3f, -2)});
  Node n{.name = "fc", .op = "FULLY_CONNECTED", .domain = "tflite", .inputs = {x, wid, bid}, .outputs = {y}};
  n.attributes["fused_activation_function"] = Attribute(std::string("RELU"));
  g.add_node(std::move(n));
  g.mark_output(y);
  return g;
}

TEST(FastTflite, FullyConnectedGivesTheReferenceKernelsBytes) {
  // Leading axes are rows, as TFLite flattens them.
  expect_fast_equals_reference(fully_connected_graph({2, 3, 40}, 10, 128, true), {codes({2, 3, 40}, 5)}, 1);
  expect_fast_equals_reference(fully_connected_graph({1, 250}, 12, 128, false), {codes({1, 250}, 6)}, 1);
  // 255 · Σ|w| over 2,000 inputs of ±127 passes 2^24: the inputs split into channel ranges whose
  // sums stay exact, met in int32.
  expect_fast_equals_reference(fully_connected_graph({1, 2000}, 4, 127, true), {codes({1, 2000}, 8)}, 1);
}

std::vector<fs::path> tflite_models() {
  std::vector<fs::path> out;
  const fs::path tree = fs::path(MEMLEDGER_SOURCE_DIR) / "tests/data/tflite";
  for (const char* name : {"hello_world_int8.tflite", "micro_speech_quantized.tflite", "keyword_scrambled.tflite"})
    out.push_back(tree / name);
  for (const fs::path& dir : {fs::path(MEMLEDGER_SOURCE_DIR) / "../shared/models/tflite",
                              fs::path(MEMLEDGER_SOURCE_DIR) / "../../shared/models/tflite"})
    if (fs::exists(dir / "person_detect.tflite")) {
      out.push_back(dir / "person_detect.tflite");
      break;
    }
  return out;
}

// Every CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED of every TFLite Micro model runs fast,
// and the models give the reference kernels' bytes, in the heap and in their arenas.
TEST(FastTflite, EveryModelsConvolutionsRunFastBitIdentically) {
  const std::vector<fs::path> models = tflite_models();
  if (models.size() < 4 && std::getenv("MEMLEDGER_REQUIRE_CORPUS"))
    FAIL() << "person_detect.tflite is not in ../shared/models/tflite";
  for (const fs::path& path : models) {
    SCOPED_TRACE(path.filename().string());
    const TfliteModel m = import_tflite_file(path.string());
    const Graph& g = m.graph;
    int convolutions = 0;
    for (NodeId id : g.order()) {
      const std::string& op = g.node(id).op;
      convolutions += op == "CONV_2D" || op == "DEPTHWISE_CONV_2D" || op == "FULLY_CONNECTED";
    }
    const Executor fast(g, {.kernels = KernelSet::kFast, .threads = 1});
    for (NodeId id : g.order()) {
      const std::string& op = g.node(id).op;
      if (op == "CONV_2D" || op == "DEPTHWISE_CONV_2D" || op == "FULLY_CONNECTED") {
        EXPECT_EQ(fast.kernel_set_of(id), KernelSet::kFast) << g.node(id).label() << "\n" << fast.summary();
      }
    }
    std::vector<Tensor> inputs;
    uint32_t seed = 21;
    for (ValueId v : g.inputs()) {
      const Value& value = g.value(v);
      Tensor t(value.dtype, value.shape);
      std::mt19937 rng(seed++);
      if (value.dtype == DType::kFloat32) {
        std::uniform_real_distribution<float> d(-1.0f, 1.0f);
        for (auto& f : t.data<float>()) f = d(rng);
      } else {  // integer codes: any bytes
        for (std::byte& b : t.bytes()) b = static_cast<std::byte>(rng() & 0xff);
      }
      inputs.push_back(std::move(t));
    }
    expect_fast_equals_reference(g, inputs, fast.fast_node_count());
    EXPECT_GE(fast.fast_node_count(), convolutions);
    EXPECT_GT(convolutions, 0);
    // Its activations are NHWC by their own shapes, and the summary says so (not "0
    // activations channels-last", the count of values laid out anew).
    EXPECT_NE(fast.summary().find("activations NHWC as the TFLite model lays them out"), std::string::npos)
        << fast.summary();
  }
}

}  // namespace
}  // namespace memledger
