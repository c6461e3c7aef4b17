// The importer's QDQ fold and QLinear reading (onnx/fold_qdq, onnx/qlinear_ops) on the
// models of scripts/make_quantized_models.py: integer operators over quantized values, no
// float DequantizeLinear output of an activation left, the ledger in int8 bytes, bad
// parameters refused naming the node and the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "corpus.h"
#include "memledger/core/error.h"
#include "memledger/device/profile.h"
#include "memledger/ir/printer.h"
#include "memledger/onnx/export.h"
#include "memledger/onnx/import.h"
#include "memledger/onnx/tensor_file.h"
#include "memledger/plan/memory_plan.h"

namespace memledger {
namespace {

const std::string kData = std::string(MEMLEDGER_SOURCE_DIR) + "/tests/data/onnx/";

// The int8 corpus (scripts/corpus/quantize_qdq.py on branch int8-corpus, the corpus-int8
// target): MEMLEDGER_CORPUS_INT8_DIR, else <build>/corpus-int8.
std::filesystem::path int8_corpus_dir() {
  const char* env = std::getenv("MEMLEDGER_CORPUS_INT8_DIR");
  return env && *env ? std::filesystem::path(env) : std::filesystem::path(MEMLEDGER_BINARY_DIR) / "corpus-int8";
}

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> counts;
  for (NodeId n : g.order()) ++counts[g.node(n).op];
  return counts;
}

const Node& node_named(const Graph& g, const std::string& name) {
  for (NodeId n : g.order())
    if (g.node(n).name == name) return g.node(n);
  ADD_FAILURE() << "no node " << name;
  static const Node none;
  return none;
}

TEST(FoldQdq, MobilenetOperatorsBecomeIntegerOperators) {
  const Graph g = import_onnx_file(kData + "qdq_block.onnx");
  const auto ops = op_counts(g);
  // The float input is quantized once, the last activation dequantized once: nothing else.
  EXPECT_EQ(ops.at("QuantizeLinear"), 1);
  EXPECT_EQ(ops.at("DequantizeLinear"), 1);
  EXPECT_EQ(ops.at("Conv"), 3);
  for (const char* op : {"Add", "Clip", "GlobalAveragePool", "Flatten", "Gemm"}) EXPECT_EQ(ops.at(op), 1) << op;
  for (NodeId n : g.order()) {
    const Node& node = g.node(n);
    if (node.op == "DequantizeLinear") {
      // Its float output feeds only the Identity that is the graph's output.
      for (NodeId reader : g.consumers(node.outputs[0])) EXPECT_EQ(g.node(reader).op, "Identity");
      continue;
    }
    if (node.op == "Identity" || node.op == "QuantizeLinear") continue;
    const Value& out = g.value(node.outputs[0]);
    EXPECT_EQ(out.dtype, DType::kInt8) << node.label();
    EXPECT_TRUE(out.quant.has_value()) << node.label();
    for (ValueId in : node.inputs)
      if (in.valid() && !g.value(in).is_constant()) {
        EXPECT_NE(g.value(in).dtype, DType::kFloat32) << node.label();
      }
  }
  const Node& conv = node_named(g, "conv1");
  ASSERT_EQ(conv.inputs.size(), 3u);
  const Value& x = g.value(conv.inputs[0]);
  const Value& w = g.value(conv.inputs[1]);
  const Value& b = g.value(conv.inputs[2]);
  ASSERT_TRUE(x.quant && w.quant && b.quant);
  EXPECT_FLOAT_EQ(x.quant->scale(), 0.02f);
  EXPECT_EQ(x.quant->zero_point(), 3);
  EXPECT_EQ(w.dtype, DType::kInt8);
  EXPECT_EQ(w.quant->axis, 0);
  EXPECT_EQ(w.quant->scales.size(), 8u);
  EXPECT_EQ(b.dtype, DType::kInt32);
  for (int64_t c = 0; c < 8; ++c) EXPECT_NEAR(b.quant->scale(c), x.quant->scale() * w.quant->scale(c), 1e-9);
  const Value& y = g.value(conv.outputs[0]);
  EXPECT_FLOAT_EQ(y.quant->scale(), 0.04f);
  EXPECT_EQ(y.quant->zero_point(), -5);
  // The DequantizeLinear shared by the depthwise Conv and the residual Add folded into both.
  const Node& add = g.node(g.value(node_named(g, "pw").outputs[0]).producer);
  EXPECT_EQ(add.name, "pw");
  EXPECT_EQ(g.consumers(conv.outputs[0]).size(), 2u);
  EXPECT_NE(print_graph(g).find("requantization float-scale (onnxruntime)"), std::string::npos);
}

TEST(FoldQdq, LedgerCountsInt8ActivationsOnly) {
  ImportOptions keep;
  keep.fold_quantized = false;
  const Graph as_written = import_onnx_file(kData + "qdq_block.onnx", keep);
  const Graph folded = import_onnx_file(kData + "qdq_block.onnx");
  EXPECT_EQ(op_counts(as_written).at("DequantizeLinear"), 17);
  const DeviceProfile host = builtin_profile("host");
  PlanOptions no_reuse;
  no_reuse.in_place = false;
  const MemoryPlan before = plan_memory(as_written, host, no_reuse);
  const MemoryPlan after = plan_memory(folded, host, no_reuse);
  // The float shadows are gone: every activation is an int8 value (1 byte an element) but
  // the last one's DequantizeLinear output, [1,5] float32 before the Identity output.
  int64_t bytes = 0;
  for (NodeId n : folded.order())
    for (ValueId out : folded.node(n).outputs) {
      const Value& v = folded.value(out);
      if (folded.is_graph_output(out)) continue;
      EXPECT_TRUE(v.dtype == DType::kInt8 || (v.shape == Shape{1, 5})) << v.name;
      bytes += element_count(v.shape, "test") * host_element_bytes(v.dtype);
    }
  EXPECT_EQ(after.ledger.by_category.at(BufferCategory::kActivation).logical_bytes, bytes);
  // As written, every int8 activation also had its float shadow (4 bytes an element) and
  // every weight its float copy.
  EXPECT_LE(after.ledger.by_category.at(BufferCategory::kActivation).logical_bytes * 4,
            before.ledger.by_category.at(BufferCategory::kActivation).logical_bytes);
  EXPECT_LT(after.ledger.peak_live_bytes * 2, before.ledger.peak_live_bytes);
}

TEST(FoldQdq, KeptWhenTheOutputIsReadInFloat) {
  // qdq_conv: Q → DQ → Conv → Q → DQ; the Conv folds, the last DQ stays (float output).
  const Graph g = import_onnx_file(kData + "qdq_conv.onnx");
  const auto ops = op_counts(g);
  EXPECT_EQ(ops.at("Conv"), 1);
  EXPECT_EQ(ops.at("QuantizeLinear"), 1);
  EXPECT_EQ(ops.at("DequantizeLinear"), 1);
}

TEST(QLinearOperators, ReadAsTheIntegerOperator) {
  const Graph g = import_onnx_file(kData + "qlinear_ops.onnx");
  const auto ops = op_counts(g);
  EXPECT_EQ(ops.count("QLinearConv"), 0u);
  EXPECT_EQ(ops.count("QLinearMatMul"), 0u);
  const Node& conv = node_named(g, "qconv");
  EXPECT_EQ(conv.op, "Conv");
  ASSERT_EQ(conv.inputs.size(), 3u);
  const Value& x = g.value(conv.inputs[0]);
  const Value& w = g.value(conv.inputs[1]);
  const Value& b = g.value(conv.inputs[2]);
  EXPECT_EQ(x.dtype, DType::kUInt8);
  EXPECT_EQ(x.quant->zero_point(), 128);
  EXPECT_EQ(w.quant->axis, 0);
  EXPECT_EQ(b.quant->axis, 0);
  for (int64_t c = 0; c < 4; ++c) EXPECT_FLOAT_EQ(b.quant->scale(c), x.quant->scale() * w.quant->scale(c));
  EXPECT_EQ(g.value(conv.outputs[0]).quant->zero_point(), 120);
  const Node& matmul = node_named(g, "qmatmul");
  EXPECT_EQ(matmul.op, "MatMul");
  EXPECT_EQ(matmul.inputs.size(), 2u);
  EXPECT_FLOAT_EQ(g.value(matmul.outputs[0]).quant->scale(), 0.2f);
}

TEST(QLinearOperators, IntegerProductsKeepTheirInt32Accumulator) {
  const Graph g = import_onnx_file(kData + "integer_ops.onnx");
  const Node& conv = node_named(g, "convint");
  EXPECT_EQ(conv.op, "Conv");
  EXPECT_EQ(conv.inputs.size(), 2u);
  EXPECT_EQ(g.value(conv.inputs[0]).quant->zero_point(), 100);
  EXPECT_EQ(g.value(conv.inputs[1]).quant->zero_point(), 128);
  EXPECT_EQ(g.value(conv.outputs[0]).dtype, DType::kInt32);
  EXPECT_FALSE(g.value(conv.outputs[0]).quant.has_value());  // no requantization
  const Node& matmul = node_named(g, "matmulint");
  EXPECT_EQ(matmul.op, "MatMul");
  EXPECT_EQ(g.value(matmul.inputs[1]).quant->zero_point(), 1);
}

TEST(QuantizedExport, WritesOnnxThatReadsBackTheSame) {
  for (const char* model : {"qdq_block", "qdq_conv", "qlinear_ops", "integer_ops"}) {
    const Graph g = import_onnx_file(kData + model + ".onnx");
    const std::string bytes = export_onnx_bytes(g);  // the ONNX checker accepts it
    ImportOptions keep;
    keep.fold_quantized = false;
    const Graph written = import_onnx_bytes(bytes, keep, model);
    // As written, no standard operator reads an integer it would compute on in float.
    for (NodeId n : written.order()) {
      const Node& node = written.node(n);
      if (node.op == "Conv" || node.op == "Gemm" || node.op == "Add") {
        EXPECT_EQ(written.value(node.inputs[0]).dtype, DType::kFloat32) << model << " " << node.label();
      }
    }
    EXPECT_EQ(print_graph(import_onnx_bytes(bytes, {}, model)), print_graph(g)) << model;
  }
}

// onnxruntime (tests/ort/run_model.mjs, graph optimisations off: the operators as ONNX
// defines them) runs `model` on `inputs`; the outputs by name.
std::map<std::string, Tensor> run_onnxruntime(const std::filesystem::path& model, const std::filesystem::path& out,
                                              const std::vector<std::pair<std::string, std::string>>& inputs) {
  const std::filesystem::path script = std::filesystem::path(MEMLEDGER_SOURCE_DIR) / "tests/ort/run_model.mjs";
  std::filesystem::remove_all(out);
  std::string command = "node '" + script.string() + "' '" + model.string() + "' '" + out.string() + "'";
  for (const auto& [name, file] : inputs) command += " '" + name + "=" + file + "'";
  EXPECT_EQ(std::system((command + " > /dev/null").c_str()), 0) << command;
  std::map<std::string, Tensor> outputs;
  if (!std::filesystem::exists(out)) return outputs;
  for (const auto& entry : std::filesystem::directory_iterator(out))
    outputs.emplace(entry.path().stem().string(), read_tensor_file(entry.path().string()).tensor);
  return outputs;
}

// The exported form of a folded model runs in onnxruntime to the same bytes as the model
// the importer read (QDQ around each integer operator computes what the QDQ model did).
TEST(QuantizedExport, OnnxruntimeComputesTheSameOutputs) {
  const std::filesystem::path ort =
      std::filesystem::path(MEMLEDGER_SOURCE_DIR) / "tests/ort/node_modules/onnxruntime-node";
  if (!std::filesystem::exists(ort))
    ML_SKIP_OR_FAIL("onnxruntime-node missing: cd tests/ort && npm ci --ignore-scripts");
  if (std::system("node --version > /dev/null 2>&1") != 0) ML_SKIP_OR_FAIL("node is not installed");
  const std::filesystem::path work = std::filesystem::path(MEMLEDGER_BINARY_DIR) / "quantized_export";
  std::filesystem::create_directories(work);
  std::vector<std::pair<std::string, std::string>> models;  // (model file, its one float input's name or "")
  for (const char* m : {"qdq_block", "qdq_conv", "qlinear_ops", "integer_ops"})
    models.emplace_back(kData + m + ".onnx", "");
  const std::filesystem::path corpus = int8_corpus_dir() / "mobilenet_v2.int8.onnx";
  if (std::filesystem::exists(corpus))
    models.emplace_back(corpus.string(), (int8_corpus_dir() / "mobilenet_v2.input.npy").string());
  for (const auto& [file, given] : models) {
    const Graph g = import_onnx_file(file);
    const std::string stem = std::filesystem::path(file).stem().string();
    const std::filesystem::path exported = work / (stem + ".exported.onnx");
    export_onnx_file(g, exported.string());
    std::vector<std::pair<std::string, std::string>> inputs;
    for (ValueId in : g.inputs()) {
      const Value& v = g.value(in);
      std::string path = given;
      if (path.empty()) {
        Tensor t(v.dtype, v.shape);
        for (int64_t i = 0; i < t.elements(); ++i)
          t.set_element_from_double(i, v.dtype == DType::kFloat32 ? std::sin(0.37 * static_cast<double>(i)) * 1.5
                                                                  : static_cast<double>((i * 37) % 100));
        path = (work / (stem + "." + v.name + ".npy")).string();
        write_tensor_file(path, t);
      }
      inputs.emplace_back(v.name, path);
    }
    const auto expected = run_onnxruntime(file, work / (stem + ".original"), inputs);
    const auto got = run_onnxruntime(exported, work / (stem + ".exported"), inputs);
    ASSERT_EQ(got.size(), expected.size()) << stem;
    ASSERT_FALSE(got.empty()) << stem;
    for (const auto& [name, t] : expected) {
      const Tensor& other = got.at(name);
      ASSERT_EQ(other.shape(), t.shape()) << stem << " " << name;
      EXPECT_TRUE(std::equal(t.bytes().begin(), t.bytes().end(), other.bytes().begin())) << stem << " " << name;
    }
  }
}

struct BadCase {
  const char* model;
  const char* message;
};

TEST(QuantizedBadInput, RefusedNamingNodeAndField) {
  for (const BadCase& c : {
           BadCase{"bad_quant_scale_negative",
                   "node DequantizeLinear 'w_dq': value 'w7': scale 'ws8' (input 1) [1] is "
                   "-0.5: a scale must be finite and greater than 0"},
           BadCase{"bad_quant_scale_nan", "scale 's2' (input 1) [0] is nan"},
           BadCase{"bad_quant_scale_inf", "scale 'ws8' (input 1) [1] is inf"},
           BadCase{"bad_quant_axis_length",
                   "node DequantizeLinear 'w_dq': value 'w7': scale 'ws8' (input 1) holds 3 "
                   "scales but axis 0 has extent 4"},
           BadCase{"bad_quant_zero_point",
                   "node DequantizeLinear 'bias_dq': value 'b10': zero point 'bz12' (input 2) [2] "
                   "is 7: an int32 value's zero point must be 0"},
           BadCase{"bad_quant_bias_overflow",
                   "node Conv 'conv': bias 'b10', output channel 1: the worst-case "
                   "accumulation"},
       }) {
    try {
      import_onnx_file(kData + c.model + ".onnx");
      ADD_FAILURE() << c.model << " imported";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.model << ": " << e.what();
    }
  }
}

// Every int8 corpus model imports with no float DequantizeLinear output of an activation
// left as a buffer (only the graph output's own), and its activations in int8 bytes;
// peak-live before (as written) and after folding is printed.
TEST(FoldQdq, Int8CorpusHasNoFloatActivations) {
  const std::filesystem::path dir = int8_corpus_dir();
  if (!std::filesystem::exists(dir / "manifest.json"))
    ML_SKIP_OR_FAIL("no int8 corpus at " + dir.string() +
                    ": build the corpus-int8 target or set MEMLEDGER_CORPUS_INT8_DIR");
  std::ifstream in(dir / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(in);
  const DeviceProfile host = builtin_profile("host");
  ImportOptions keep;
  keep.fold_quantized = false;
  for (const auto& [name, entry] : manifest.at("models").items()) {
    const std::string file = (dir / entry.at("file").at("file").get<std::string>()).string();
    const Graph g = import_onnx_file(file);
    int float_activations = 0, folded = 0;
    for (NodeId n : g.order()) {
      const Node& node = g.node(n);
      if (node.op != "DequantizeLinear") {
        folded += g.value(node.outputs[0]).quant ? 1 : 0;
        continue;
      }
      if (g.value(node.inputs[0]).is_constant() || g.is_graph_output(node.outputs[0])) continue;
      ++float_activations;
      ADD_FAILURE() << name << ": DequantizeLinear " << node.label() << " leaves float '"
                    << g.value(node.outputs[0]).name << "' read by "
                    << g.node(g.consumers(node.outputs[0]).at(0)).label();
    }
    EXPECT_EQ(float_activations, 0) << name;
    const PlacementOptions greedy{.algorithm = allocate::Algorithm::kGreedy};  // peak-live is the ledger's
    const int64_t before = plan_memory(import_onnx_file(file, keep), host, {}, greedy).ledger.peak_live_bytes;
    const int64_t after = plan_memory(g, host, {}, greedy).ledger.peak_live_bytes;
    EXPECT_LT(after * 3, before) << name;
    std::printf("%-22s integer ops %4d  peak-live as written %10lld B, folded %9lld B (%.2fx)\n", name.c_str(), folded,
                static_cast<long long>(before), static_cast<long long>(after),
                static_cast<double>(before) / static_cast<double>(after));
  }
}

}  // namespace
}  // namespace memledger
