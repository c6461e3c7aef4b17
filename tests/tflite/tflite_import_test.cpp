// The .tflite reader on TFLite Micro's own models and on hostile files; the TFLM offline
// plan written back and read again; keyword_scrambled's arena against TFLM's figure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "corpus.h"
#include "memledger/core/error.h"
#include "memledger/device/profile.h"
#include "memledger/model/read_model.h"
#include "memledger/model/tflm_plan.h"
#include "memledger/plan/memory_plan.h"
#include "memledger/tflite/import.h"
#include "memledger/tflite/offline_plan.h"
#include "tflite/schema_generated.h"

namespace memledger {
namespace {

namespace fb = tflite::fb;
namespace fs = std::filesystem;

fs::path data(const std::string& name) { return fs::path(MEMLEDGER_SOURCE_DIR) / "tests/data/tflite" / name; }

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The shared model folder (person_detect is not copied into the tree).
std::optional<fs::path> shared_model(const std::string& name) {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("MEMLEDGER_TFLITE_MODELS"); env && *env) dirs.emplace_back(env);
  dirs.push_back(fs::path(MEMLEDGER_SOURCE_DIR) / "../shared/models/tflite");
  dirs.push_back(fs::path(MEMLEDGER_SOURCE_DIR) / "../../shared/models/tflite");
  for (const auto& d : dirs)
    if (fs::exists(d / name)) return d / name;
  return std::nullopt;
}

TfliteModel import_bytes(const std::vector<uint8_t>& bytes) {
  // Flatbuffers read in place: 8-byte aligned as a file read is.
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  if (!bytes.empty()) std::memcpy(aligned.data(), bytes.data(), bytes.size());
  return import_tflite_bytes({reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size()}, "test.tflite");
}

DeviceProfile tflm_profile() { return load_device_profile_file(data("tflm.toml").string()); }

std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> out;
  for (NodeId n : g.order()) out.push_back(g.node(n).op);
  return out;
}

TEST(TfliteImport, HelloWorldIsThreeFullyConnected) {
  const TfliteModel m = import_tflite_file(data("hello_world_int8.tflite").string());
  const Graph& g = m.graph;
  EXPECT_EQ(g.requantization, Requantization::kFixedPoint);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"FULLY_CONNECTED", "FULLY_CONNECTED", "FULLY_CONNECTED"}));
  const Node& first = g.node(g.order()[0]);
  EXPECT_EQ(first.domain, "tflite");
  EXPECT_EQ(first.string_attr("fused_activation_function", ""), "RELU");
  EXPECT_EQ(first.string_attr("weights_format", ""), "DEFAULT");
  EXPECT_EQ(first.int_attr("keep_num_dims", -1), 0);
  EXPECT_EQ(g.node(g.order()[2]).string_attr("fused_activation_function", ""), "NONE");
  // Weights [O, I] int8, a constant with its quantization; the input int8 [1, 1].
  const Value& w = g.value(first.inputs[1]);
  EXPECT_TRUE(w.is_constant());
  EXPECT_EQ(w.dtype, DType::kInt8);
  EXPECT_EQ(w.shape.size(), 2u);
  ASSERT_TRUE(w.quant.has_value());
  const Value& x = g.value(g.inputs().at(0));
  EXPECT_EQ(x.dtype, DType::kInt8);
  EXPECT_EQ(x.shape, (Shape{1, 1}));
  ASSERT_TRUE(x.quant.has_value());
  EXPECT_EQ(m.tensor_values.size(), 10u);
}

TEST(TfliteImport, KeywordScrambledSvdfCarriesItsState) {
  const TfliteModel m = import_tflite_file(data("keyword_scrambled.tflite").string());
  const Graph& g = m.graph;
  int svdf = 0;
  for (NodeId n : g.order()) {
    const Node& node = g.node(n);
    if (node.op != "SVDF") continue;
    ++svdf;
    ASSERT_EQ(node.outputs.size(), 2u) << node.label();  // the new state
    const Value& state = g.value(node.inputs.at(4));
    EXPECT_TRUE(state.is_constant());
    EXPECT_EQ(g.value(node.outputs[1]).shape, state.shape);
    EXPECT_EQ(node.int_attr("rank", 0), 1);
    EXPECT_EQ(node.string_attr("fused_activation_function", ""), "RELU");
  }
  EXPECT_EQ(svdf, 7);
  EXPECT_EQ(ops(g).front(), "QUANTIZE");
  EXPECT_EQ(ops(g).back(), "QUANTIZE");
}

// TFLM's memory_arena_threshold_test: 672 B of non-persistent head, 10,240 B of variables.
TEST(TfliteImport, KeywordScrambledArenaAgainstTflm) {
  const TfliteModel m = import_tflite_file(data("keyword_scrambled.tflite").string());
  const MemoryPlan plan = plan_memory(m.graph, tflm_profile());
  EXPECT_EQ(plan.ledger.by_category.at(BufferCategory::kPersistent).physical_bytes, 10240);
  EXPECT_EQ(plan.persistent_bytes, 10240);
  EXPECT_LE(plan.head_bytes, 672);
  EXPECT_EQ(plan.arena_bytes, plan.head_bytes + plan.persistent_bytes);
  // Every persistent buffer lies above the head, live for the whole program.
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    if (b.category != BufferCategory::kPersistent) continue;
    EXPECT_GE(plan.offsets[i], plan.head_bytes) << b.name;
    EXPECT_EQ(b.first_step, 0);
    EXPECT_EQ(b.last_step, plan.liveness.steps() - 1);
  }
}

TEST(TfliteImport, MicroSpeechAndPersonDetectAreNhwc) {
  std::vector<fs::path> models{data("micro_speech_quantized.tflite")};
  if (auto p = shared_model("person_detect.tflite")) models.push_back(*p);
  for (const auto& path : models) {
    const TfliteModel m = import_tflite_file(path.string());
    const Graph& g = m.graph;
    bool depthwise_or_conv = false;
    for (NodeId n : g.order()) {
      const Node& node = g.node(n);
      if (node.op != "CONV_2D" && node.op != "DEPTHWISE_CONV_2D") continue;
      depthwise_or_conv = true;
      const Value& x = g.value(node.inputs[0]);
      EXPECT_EQ(roles_to_string(x.roles), "NHWC") << path << " " << node.label();
      const Value& w = g.value(node.inputs[1]);
      ASSERT_TRUE(w.quant.has_value());
      if (w.quant->per_axis()) {
        EXPECT_EQ(w.quant->axis, node.op == "CONV_2D" ? 0 : 3) << node.label();
      }
      EXPECT_TRUE(node.has_attr("padding") && node.has_attr("dilation_h_factor"));
    }
    EXPECT_TRUE(depthwise_or_conv) << path;
  }
}

TEST(TfliteImport, ReadModelTellsTheFormatByContent) {
  EXPECT_EQ(model_format(data("hello_world_int8.tflite").string()), ModelFormat::kTflite);
  const ModelFile f = read_model(data("hello_world_int8.tflite").string());
  EXPECT_EQ(f.format, ModelFormat::kTflite);
  EXPECT_EQ(f.tensor_values.size(), 10u);
}

// ---- the offline plan written back ----

void check_offline_plan(const fs::path& path, const DeviceProfile& profile) {
  const std::vector<uint8_t> original = read_bytes(path);
  const TfliteModel m = import_tflite_file(path.string());
  const MemoryPlan plan = plan_memory(m.graph, profile);
  const TflmExport exported = tflm_offline_plan(m.graph, plan, m.tensor_values);
  const std::vector<uint8_t> written = write_tflm_plan(path.string(), exported);
  // The written model reads as the same graph, and carries the plan.
  const TfliteModel again = import_bytes(written);
  EXPECT_EQ(ops(again.graph), ops(m.graph));
  std::vector<uint64_t> aligned((written.size() + 7) / 8);
  std::memcpy(aligned.data(), written.data(), written.size());
  const auto read = read_offline_plan({reinterpret_cast<const uint8_t*>(aligned.data()), written.size()});
  ASSERT_TRUE(read.has_value()) << path;
  EXPECT_EQ(read->subgraph, 0);
  ASSERT_EQ(read->offsets.size(), m.tensor_values.size());
  // Every offset is the plan's; no two tensors live at once overlap unless one is the
  // other's bytes (in place).
  std::map<int32_t, int> buffer_of;
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i)
    if (plan.liveness.buffers[i].value.valid()) buffer_of[plan.liveness.buffers[i].value.index] = static_cast<int>(i);
  const auto intervals = plan.liveness.storage_intervals();
  struct Placed {
    int buffer;
    int64_t offset, size;
  };
  std::vector<Placed> placed;
  for (size_t t = 0; t < read->offsets.size(); ++t) {
    const int32_t offset = read->offsets[t];
    const auto it = buffer_of.find(m.tensor_values[t].index);
    if (offset < 0) continue;
    ASSERT_NE(it, buffer_of.end()) << "tensor " << t;
    EXPECT_EQ(offset, plan.offsets[static_cast<size_t>(it->second)]) << "tensor " << t;
    EXPECT_LT(offset, plan.head_bytes);
    placed.push_back({it->second, offset, plan.liveness.buffers[static_cast<size_t>(it->second)].physical_bytes});
  }
  EXPECT_GT(placed.size(), 1u);
  for (size_t a = 0; a < placed.size(); ++a)
    for (size_t b = a + 1; b < placed.size(); ++b) {
      const auto& p = placed[a];
      const auto& q = placed[b];
      if (plan.liveness.storage_of(p.buffer) == plan.liveness.storage_of(q.buffer)) continue;
      const auto& ip = intervals[static_cast<size_t>(p.buffer)];
      const auto& iq = intervals[static_cast<size_t>(q.buffer)];
      const bool live_together = ip.first <= iq.second && iq.first <= ip.second;
      const bool overlap = p.offset < q.offset + q.size && q.offset < p.offset + p.size;
      EXPECT_FALSE(live_together && overlap) << path << ": tensors at " << p.offset << " and " << q.offset;
    }
  // The original bytes are all there, unchanged, behind the new root.
  EXPECT_NE(std::search(written.begin(), written.end(), original.begin() + 8, original.end()), written.end());
  // Writing again replaces the plan instead of adding a second one.
  std::vector<uint8_t> twice =
      write_offline_plan({reinterpret_cast<const uint8_t*>(aligned.data()), written.size()}, exported.plan);
  std::vector<uint64_t> aligned2((twice.size() + 7) / 8);
  std::memcpy(aligned2.data(), twice.data(), twice.size());
  const fb::Model* model = fb::GetModel(aligned2.data());
  int plans = 0;
  for (const auto* md : *model->metadata()) plans += md->name()->string_view() == kOfflinePlanMetadata;
  EXPECT_EQ(plans, 1);
}

TEST(TfliteOfflinePlan, RoundTripsOnEveryModel) {
  for (const char* name : {"hello_world_int8.tflite", "keyword_scrambled.tflite", "micro_speech_quantized.tflite"})
    check_offline_plan(data(name), tflm_profile());
  if (auto p = shared_model("person_detect.tflite")) check_offline_plan(*p, tflm_profile());
  check_offline_plan(data("keyword_scrambled.tflite"), builtin_profile("mcu"));
}

TEST(TfliteOfflinePlan, VariablesAndConstantsAreLeftToTflm) {
  const TfliteModel m = import_tflite_file(data("keyword_scrambled.tflite").string());
  const MemoryPlan plan = plan_memory(m.graph, tflm_profile());
  const TflmExport e = tflm_offline_plan(m.graph, plan, m.tensor_values);
  for (size_t t = 0; t < m.tensor_values.size(); ++t) {
    const Value& v = m.graph.value(m.tensor_values[t]);
    if (v.is_constant()) {
      EXPECT_EQ(e.plan.offsets[t], -1) << v.name;
    }
  }
  EXPECT_EQ(e.planned + e.left_to_tflm, static_cast<int>(m.tensor_values.size()));
  EXPECT_EQ(e.persistent_bytes, 10240);
}

// ---- hostile files ----

struct Knobs {
  uint32_t weight_buffer = 2;
  size_t weight_bytes = 8;
  uint32_t opcode_index = 0;
  int32_t input_tensor = 0;
  bool subgraph = true;
  std::vector<int32_t> input_shape{1, 4};
  const char* identifier = "TFL3";
  // y as a variable (buffer 0, no data) of this shape, when given
  std::vector<int32_t> variable_y_shape{};
  // The Model's field 7 (signature_defs, which the reader's schema leaves untyped) present,
  // its offset pointing this far past the field (0: a valid vector of 4 bytes).
  bool untyped_field = false;
  uint32_t untyped_field_offset = 0;
};

// x int8 [1,4] → FULLY_CONNECTED (w int8 [2,4]) → y int8 [1,2], with the knobs' defects.
std::vector<uint8_t> tiny_model(const Knobs& k) {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<uint8_t> w(k.weight_bytes, 1);
  const auto wdata = b.CreateVector(w);
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers{fb::CreateBuffer(b), fb::CreateBuffer(b),
                                                       fb::CreateBuffer(b, wdata)};
  const std::vector<int32_t> ws{2, 4}, ys{1, 2};
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors{
      fb::CreateTensorDirect(b, &k.input_shape, fb::TensorType::INT8, 1, "x"),
      fb::CreateTensorDirect(b, &ws, fb::TensorType::INT8, k.weight_buffer, "w"),
      k.variable_y_shape.empty()
          ? fb::CreateTensorDirect(b, &ys, fb::TensorType::INT8, 0, "y")
          : fb::CreateTensorDirect(b, &k.variable_y_shape, fb::TensorType::INT8, 0, "y", 0, true)};
  const std::vector<int32_t> in{k.input_tensor, 1, -1}, out{2}, graph_in{0}, graph_out{2};
  const auto options = fb::CreateFullyConnectedOptions(b);
  std::vector<flatbuffers::Offset<fb::Operator>> operators{fb::CreateOperatorDirect(
      b, k.opcode_index, &in, &out, fb::BuiltinOptions::FullyConnectedOptions, options.Union())};
  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs;
  if (k.subgraph) subgraphs.push_back(fb::CreateSubGraphDirect(b, &tensors, &graph_in, &graph_out, &operators, "main"));
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes{fb::CreateOperatorCode(b, 9, 0, 1, 9)};
  if (!k.untyped_field) {
    b.Finish(fb::CreateModelDirect(b, 3, &codes, &subgraphs, "tiny", &buffers), k.identifier);
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
  }
  const auto codes_v = b.CreateVector(codes);
  const auto subgraphs_v = b.CreateVector(subgraphs);
  const auto description = b.CreateString("tiny");
  const auto buffers_v = b.CreateVector(buffers);
  const auto untyped = b.CreateVector(std::vector<uint8_t>{1, 2, 3, 4});
  constexpr flatbuffers::voffset_t kField7 = 4 + 2 * 7;
  fb::ModelBuilder mb(b);
  mb.add_version(3);
  mb.add_operator_codes(codes_v);
  mb.add_subgraphs(subgraphs_v);
  mb.add_description(description);
  mb.add_buffers(buffers_v);
  b.AddOffset(kField7, untyped);
  b.Finish(mb.Finish(), k.identifier);
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  if (k.untyped_field_offset != 0) {
    // The root table's field 7, through its vtable, set to point past the file.
    const auto root = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(bytes.data());
    const auto vtable = static_cast<size_t>(static_cast<int64_t>(root) -
                                            flatbuffers::ReadScalar<flatbuffers::soffset_t>(bytes.data() + root));
    const auto field = flatbuffers::ReadScalar<flatbuffers::voffset_t>(bytes.data() + vtable + kField7);
    flatbuffers::WriteScalar<flatbuffers::uoffset_t>(bytes.data() + root + field, k.untyped_field_offset);
  }
  return bytes;
}

std::string import_error(const std::vector<uint8_t>& bytes) {
  try {
    import_bytes(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TfliteHostile, TinyModelImports) {
  const TfliteModel m = import_bytes(tiny_model({}));
  EXPECT_EQ(ops(m.graph), (std::vector<std::string>{"FULLY_CONNECTED"}));
  EXPECT_FALSE(m.graph.node(m.graph.order()[0]).inputs[2].valid());  // the omitted bias
}

// A field the reader's schema does not type is not verified when the model is read, and the
// offline-plan writer copies it as an offset: one pointing past the file is refused, naming
// the field (a fuzzer's file made the writer read past its end), and a valid one is kept.
TEST(TfliteHostile, TheOfflinePlanWriterChecksUntypedFields) {
  auto write = [](const std::vector<uint8_t>& bytes) {
    const TfliteModel m = import_bytes(bytes);
    const MemoryPlan plan = plan_memory(m.graph, builtin_profile("host"));
    const TflmExport e = tflm_offline_plan(m.graph, plan, m.tensor_values);
    std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    return write_offline_plan({reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size()}, e.plan, "tiny");
  };
  const std::vector<uint8_t> kept = write(tiny_model({.untyped_field = true}));
  const uint8_t field[] = {4, 0, 0, 0, 1, 2, 3, 4};  // the vector: its length, its bytes
  EXPECT_NE(std::search(kept.begin(), kept.end(), std::begin(field), std::end(field)), kept.end());
  try {
    write(tiny_model({.untyped_field = true, .untyped_field_offset = 1u << 20}));
    ADD_FAILURE() << "an untyped field pointing past the file was copied";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tiny: model field 7 points outside the file"), std::string::npos) << e.what();
  }
}

TEST(TfliteHostile, EachDefectIsNamed) {
  EXPECT_NE(import_error(tiny_model({.identifier = "ONNX"})).find("file identifier 'ONNX'"), std::string::npos);
  EXPECT_NE(import_error(tiny_model({.weight_buffer = 7})).find("buffer 7 is out of range"), std::string::npos);
  EXPECT_NE(import_error(tiny_model({.weight_bytes = 3})).find("buffer 2 has 3 bytes"), std::string::npos);
  EXPECT_NE(import_error(tiny_model({.weight_bytes = 0})).find("zero-size buffer"), std::string::npos);
  EXPECT_NE(import_error(tiny_model({.opcode_index = 5})).find("opcode_index 5"), std::string::npos);
  EXPECT_NE(import_error(tiny_model({.input_tensor = 99})).find("tensor 99, out of range"), std::string::npos);
  EXPECT_NE(import_error(tiny_model({.subgraph = false})).find("subgraphs"), std::string::npos);
  EXPECT_NE(import_error(tiny_model({.input_shape = {1 << 30, 1 << 30, 1 << 30, 1 << 30}})).find("overflow"),
            std::string::npos);
  EXPECT_NE(import_error(tiny_model({.input_shape = {1, 5}})).find("FULLY_CONNECTED"), std::string::npos);
  EXPECT_NE(import_error(tiny_model({.input_shape = {1, -4}})).find("extent -4"), std::string::npos);
  // An int64 zero-point vector 4 bytes off its alignment (the Verifier checks only the length
  // prefix's): read byte by byte, its value named (a fuzzer's find; UBSan saw the misaligned load).
  const std::string zero_points = import_error(read_bytes(data("hostile_misaligned_zero_points.tflite")));
  EXPECT_NE(zero_points.find("zero point -455266533360 is outside int8"), std::string::npos) << zero_points;
  // A variable's zeros are not in the file: 4 GiB of them is refused before anything is allocated
  // (found by the fuzzer, an out-of-memory).
  const std::string zeros = import_error(tiny_model({.variable_y_shape = {1 << 16, 1 << 16}}));
  EXPECT_NE(zeros.find("tensors[2] 'y': a variable of 4294967296 bytes with no data"), std::string::npos) << zeros;
}

TEST(TfliteHostile, TruncatedFilesAreRefused) {
  const std::vector<uint8_t> whole = read_bytes(data("hello_world_int8.tflite"));
  int refused = 0;
  for (size_t size = 0; size < whole.size(); size += 7) {
    const std::string error = import_error({whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(size)});
    if (!error.empty()) ++refused;
  }
  EXPECT_EQ(refused, static_cast<int>((whole.size() + 6) / 7));
  EXPECT_NE(import_error({whole.begin(), whole.begin() + 100}).find("does not verify"), std::string::npos);
}

// Found by the fuzz target (CI, 2026-12-04): the Model table's vtable verifies, but the offset
// of its operator_codes field lies past the end of the 176-byte file; reading it overflowed.
TEST(TfliteHostile, FieldOffsetPastTheEndIsNamed) {
  const std::string error = import_error(read_bytes(data("fuzz_model_field_past_end.tflite")));
  EXPECT_NE(error.find("does not verify"), std::string::npos) << error;
  EXPECT_NE(error.find("operator_codes"), std::string::npos) << error;
}

// Random byte changes: an Error or a model, never a crash (ASan builds check the reads).
TEST(TfliteHostile, MutatedFilesNeverCrash) {
  const std::vector<uint8_t> whole = read_bytes(data("keyword_scrambled.tflite"));
  std::mt19937 rng(36);
  int refused = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<uint8_t> bytes = whole;
    const int changes = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < changes; ++c) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    if (!import_error(bytes).empty()) ++refused;
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace memledger
