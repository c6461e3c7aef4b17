// Import of the tiny models in tests/data/onnx (written by scripts/make_test_models.py):
// values, constants, axis roles, and one clear Error for each kind of bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <fstream>
#include <sstream>

#include "memledger/core/error.h"
#include "memledger/exec/executor.h"
#include "memledger/ir/printer.h"
#include "memledger/onnx/export.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

std::string data_path(const std::string& name) {
  return std::string(MEMLEDGER_SOURCE_DIR) + "/tests/data/onnx/" + name;
}

const Value& find_value(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.value_count(); ++i)
    if (g.value(ValueId{static_cast<int32_t>(i)}).name == name) return g.value(ValueId{static_cast<int32_t>(i)});
  throw std::runtime_error("no value " + name);
}

std::string roles_of(const Graph& g, const std::string& name) { return roles_to_string(find_value(g, name).roles); }

// The message of the Error that importing `file` throws.
std::string import_error(const std::string& file, const ImportOptions& options = {}) {
  try {
    import_onnx_file(data_path(file), options);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  ADD_FAILURE() << file << " imported but should be refused";
  return "";
}

TEST(OnnxImport, SmallCnnWithRolesFromOperators) {
  const Graph g = import_onnx_file(data_path("conv_bn_relu.onnx"));
  EXPECT_EQ(g.opset, 13);
  EXPECT_EQ(g.order().size(), 6u);
  EXPECT_EQ(find_value(g, "x").shape, (Shape{1, 3, 8, 8}));
  EXPECT_EQ(roles_of(g, "x"), "NCHW");  // from the Conv that reads it
  EXPECT_EQ(roles_of(g, "c"), "NCHW");
  EXPECT_EQ(roles_of(g, "r"), "NCHW");  // through the Relu
  EXPECT_EQ(roles_of(g, "p"), "NCHW");  // GlobalAveragePool's output
  EXPECT_EQ(roles_of(g, "f"), "??");    // Flatten states nothing
  EXPECT_EQ(roles_of(g, "gamma"), "C");
  EXPECT_EQ(roles_of(g, "b"), "C");     // Conv bias
  EXPECT_EQ(roles_of(g, "w"), "?CHW");  // input channels, then the window (tests/ir/conv_weight_roles_test.cpp)
  EXPECT_TRUE(find_value(g, "w").is_constant());
  EXPECT_EQ(find_value(g, "w").constant->shape(), (Shape{4, 3, 3, 3}));
}

TEST(OnnxImport, BroadcastParametersTakeTheRolesOfTheAxesTheyAlignTo) {
  const Graph stated = import_onnx_file(data_path("affine_c_eq_w_stated.onnx"));
  EXPECT_EQ(roles_of(stated, "scale"), "NCHW");  // [1,20,1,1] against NCHW
  EXPECT_EQ(roles_of(stated, "y"), "NCHW");
  const Graph vector = import_onnx_file(data_path("affine_c_eq_w.onnx"));
  EXPECT_EQ(roles_of(vector, "scale"), "W");  // [20] aligns right: the width axis, whatever its length
  const Graph c_eq_h = import_onnx_file(data_path("affine_c_eq_h.onnx"));
  EXPECT_EQ(roles_of(c_eq_h, "scale"), "CHW");  // [16,1,1]
}

TEST(OnnxImport, TypedFieldsConstantNodesAndFloat16) {
  const Graph g = import_onnx_file(data_path("typed_and_constant.onnx"));
  const Value& scale = find_value(g, "scale");
  ASSERT_TRUE(scale.is_constant());
  EXPECT_EQ(scale.constant->data<float>()[1], 2.0f);
  const Value& offset = find_value(g, "offset");  // from a Constant node
  ASSERT_TRUE(offset.is_constant());
  EXPECT_EQ(offset.constant->data<float>()[1], -1.0f);
  EXPECT_EQ(g.order().size(), 4u);  // the Constant node is not a node of the IR
  const Value& half = find_value(g, "h");
  EXPECT_EQ(half.dtype, DType::kFloat16);
  EXPECT_EQ(half.constant->element_as_double(1), 2.0);
  EXPECT_EQ(find_value(g, "shape").constant->data<int64_t>()[1], -1);
  EXPECT_EQ(find_value(g, "y").shape, (Shape{1, 18}));
}

TEST(OnnxImport, ExternalDataNextToTheModel) {
  const Graph g = import_onnx_file(data_path("external_data.onnx"));
  const auto w = find_value(g, "w").constant->data<float>();
  EXPECT_EQ(std::vector<float>(w.begin(), w.end()), (std::vector<float>{1, 2, 3}));
  // From bytes there is no folder to look in.
  std::ifstream in(data_path("external_data.onnx"), std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_THROW(import_onnx_bytes(bytes.str()), Error);
}

TEST(OnnxImport, ExternalDataHasItsOwnBound) {
  // The external bytes count against max_external_bytes, not the file's bound: a model
  // whose weights are beyond 2 GiB reads (vit_h_14), and the bound still refuses.
  ImportOptions options;
  options.max_bytes = static_cast<int64_t>(std::filesystem::file_size(data_path("external_data.onnx")));
  EXPECT_NO_THROW(import_onnx_file(data_path("external_data.onnx"), options));
  options.max_external_bytes = 8;  // the tensor holds 12
  try {
    import_onnx_file(data_path("external_data.onnx"), options);
    ADD_FAILURE() << "external data over its bound was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("initializer 'w': external data of 12 bytes exceeds the size bound"),
              std::string::npos)
        << e.what();
  }
}

TEST(OnnxImport, NhwcInputsThroughTransposeOrStated) {
  const Graph g = import_onnx_file(data_path("nhwc_input.onnx"));
  EXPECT_EQ(roles_of(g, "xt"), "NCHW");
  EXPECT_EQ(roles_of(g, "x"), "NHWC");  // carried back through the Transpose
  ImportOptions nhwc;
  nhwc.input_layout_nhwc = true;
  EXPECT_EQ(roles_of(import_onnx_file(data_path("nhwc_input.onnx"), nhwc), "x"), "NHWC");
}

TEST(OnnxImport, PerAxisQuantizationStatesTheChannel) {
  const Graph g = import_onnx_file(data_path("quantized_per_axis.onnx"));
  EXPECT_EQ(roles_of(g, "x"), "?C?");
  EXPECT_EQ(roles_of(g, "q"), "?C?");
  EXPECT_EQ(roles_of(g, "s"), "C");
}

TEST(OnnxImport, UnknownOperatorsImportButAreNotKnown) {
  const Graph g = import_onnx_file(data_path("custom_op.onnx"));
  ASSERT_EQ(g.order().size(), 2u);
  EXPECT_TRUE(is_known_operator(g.node(g.order()[0]), g.opset));
  EXPECT_FALSE(is_known_operator(g.node(g.order()[1]), g.opset));
  EXPECT_EQ(g.node(g.order()[1]).domain, "com.example");
}

TEST(OnnxImport, BigExternalDataIsMappedNotRead) {
  const Graph read = import_onnx_file(data_path("external_data.onnx"));
  EXPECT_FALSE(find_value(read, "w").constant->is_mapped());  // 12 bytes: below map_tensors_from
  ImportOptions options;
  options.map_tensors_from = 4;
  const Graph mapped = import_onnx_file(data_path("external_data.onnx"), options);
  const Tensor& w = *find_value(mapped, "w").constant;
  EXPECT_TRUE(w.is_mapped());
  EXPECT_EQ(w, *find_value(read, "w").constant);
  EXPECT_EQ(print_graph(mapped), print_graph(read));
  // The checks before the mapping still refuse what leaves the folder.
  EXPECT_NE(import_error("bad_external_escape.onnx", options).find("leaves the model's folder"), std::string::npos);
}

// A model whose weight (64 × 300 floats, 75 KiB) is big enough to stay in a mapped file.
class MappedModelFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("memledger_import_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    Graph g;
    const ValueId x = g.add_input({.name = "x", .shape = {1, 64}});
    Tensor w(DType::kFloat32, {64, 300});
    for (int64_t i = 0; i < w.elements(); ++i)
      w.data<float>()[static_cast<size_t>(i)] = 0.001f * static_cast<float>(i % 997);
    const ValueId wid = g.add_constant("w", w);
    const ValueId y = g.add_value({.name = "y", .shape = {1, 300}});
    g.add_node({.name = "mm", .op = "MatMul", .inputs = {x, wid}, .outputs = {y}});
    g.mark_output(y);
    bytes_ = export_onnx_bytes(g);
    std::ofstream(path(), std::ios::binary) << bytes_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "model.onnx").string(); }
  std::filesystem::path dir_;
  std::string bytes_;
};

TEST_F(MappedModelFile, WeightsStayInTheMappedFile) {
  const Graph read = import_onnx_file(path());  // under map_files_from: parsed as before
  EXPECT_FALSE(find_value(read, "w").constant->is_mapped());
  ImportOptions options;
  options.map_files_from = 0;
  const Graph mapped = import_onnx_file(path(), options);
  const Tensor& w = *find_value(mapped, "w").constant;
  EXPECT_EQ(w, *find_value(read, "w").constant);
  EXPECT_EQ(print_graph(mapped), print_graph(read));
  // In place unless the protobuf put the bytes at an offset the floats cannot use.
  const auto at =
      bytes_.find(std::string(reinterpret_cast<const char*>(find_value(read, "w").constant->bytes().data()), 64));
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(w.is_mapped(), at % 4 == 0);
  // Tensors under map_tensors_from are read.
  options.map_tensors_from = int64_t{1} << 20;
  EXPECT_FALSE(find_value(import_onnx_file(path(), options), "w").constant->is_mapped());
}

TEST_F(MappedModelFile, RunsTheSameFromTheMappingAndAfterReleasingIt) {
  ImportOptions options;
  options.map_files_from = 0;
  options.map_tensors_from = 0;  // every weight viewed in place where aligned
  const Graph read = import_onnx_file(path());
  const Graph mapped = import_onnx_file(path(), options);
  Tensor x(DType::kFloat32, {1, 64});
  for (int64_t i = 0; i < 64; ++i) x.data<float>()[static_cast<size_t>(i)] = 0.5f - 0.01f * static_cast<float>(i);
  for (KernelSet set : {KernelSet::kReference, KernelSet::kFast}) {
    const auto expected = Executor(read, {.kernels = set}).run({x});
    Executor releasing(mapped, {.kernels = set, .release_weights_after_use = true});
    // Twice: the second run reads the released pages back from the file.
    EXPECT_EQ(releasing.run({x}), expected) << kernel_set_name(set);
    EXPECT_EQ(releasing.run({x}), expected) << kernel_set_name(set);
  }
}

TEST_F(MappedModelFile, ATruncatedMappedFileIsRefusedAsBefore) {
  std::ofstream(path(), std::ios::binary | std::ios::trunc) << bytes_.substr(0, bytes_.size() / 2);
  ImportOptions options;
  options.map_files_from = 0;
  try {
    import_onnx_file(path(), options);
    ADD_FAILURE() << "a truncated model imported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("the protobuf does not parse"), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, DynamicDimensionsNeedAShape) {
  const std::string message = import_error("bad_dynamic_dims.onnx");
  EXPECT_NE(message.find("bad_dynamic_dims.onnx: graph input 'x': axis 0 has no static extent ('N')"),
            std::string::npos)
      << message;
  ImportOptions options;
  add_input_shape(options, "x=2x3x4x4");
  const Graph g = import_onnx_file(data_path("bad_dynamic_dims.onnx"), options);
  EXPECT_EQ(find_value(g, "y").shape, (Shape{2, 3, 4, 4}));
  ImportOptions wrong;
  add_input_shape(wrong, "x=2x5x4x4");
  EXPECT_NE(import_error("bad_dynamic_dims.onnx", wrong).find("axis 1 extent 5 but the model declares 3"),
            std::string::npos);
  ImportOptions unknown;
  add_input_shape(unknown, "z=1");
  EXPECT_NE(import_error("bad_dynamic_dims.onnx", unknown).find("input shape for 'z': not a graph input (inputs: x)"),
            std::string::npos);
  // The message names the value, not a flag; the error names the option it came from, kept
  // through the file's name put ahead of it (the command line names its flag by it).
  try {
    import_onnx_file(data_path("bad_dynamic_dims.onnx"), unknown);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.option(), ErrorOption::kInputShapes);
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, InputShapeOptionIsParsedStrictly) {
  ImportOptions options;
  add_input_shape(options, "data:0=1x3x224x224");
  EXPECT_EQ(options.input_shapes.at("data:0"), (Shape{1, 3, 224, 224}));
  for (const char* bad : {"x", "=1x2", "x=", "x=1xx2", "x=0x3", "x=-1", "x=1x3x", "x=99999999999999999999"})
    EXPECT_THROW(add_input_shape(options, bad), Error) << bad;
  EXPECT_THROW(add_input_shape(options, "data:0=1"), Error);  // named twice
}

struct BadCase {
  const char* file;
  const char* message;  // part of the Error's message, after the file's name
};

class OnnxImportRefuses : public ::testing::TestWithParam<BadCase> {};

TEST_P(OnnxImportRefuses, WithAMessageNamingFileAndPlace) {
  const std::string message = import_error(GetParam().file);
  EXPECT_EQ(message.rfind(data_path(GetParam().file) + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(GetParam().message), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, OnnxImportRefuses,
    ::testing::Values(
        BadCase{"bad_truncated.onnx", "not an ONNX model"}, BadCase{"bad_garbled.onnx", "not an ONNX model"},
        BadCase{"bad_missing_initializer.onnx", "node Conv 'conv': input 'w_missing' is not defined"},
        BadCase{"bad_cycle.onnx", "(a cycle)"},
        // A fuzzer finding (scripts/fuzz.sh): a rank-2 Conv input crashed libonnx's shape inference.
        BadCase{"bad_conv_rank.onnx", "node Conv 'conv': input 'x' has rank 2"},
        BadCase{"bad_conv_weight_rank.onnx", "node Conv 'conv': weights of rank 3 for an input of rank 4"},
        BadCase{"bad_pool_kernel_shape.onnx", "node MaxPool 'pool': kernel_shape has 3 values for 2 spatial axes"},
        BadCase{"bad_dangling_output.onnx", "graph output 'nowhere' is not defined"},
        BadCase{"bad_dynamic_dims.onnx", "graph input 'x': axis 0 has no static extent"},
        BadCase{"bad_overflow_shape.onnx", "graph input: value 'x' of shape [1099511627776,1099511627776,16]"},
        BadCase{"bad_opset6.onnx", "opset 6 is not supported"},
        BadCase{"bad_opset18.onnx", "opset 18 is not supported"},
        BadCase{"bad_initializer_size.onnx", "initializer 'w': shape [1000,1000] of float32 needs 4000000 bytes"},
        BadCase{"bad_if_subgraph.onnx", "node If 'choose': attribute 'else_branch' is a subgraph"},
        BadCase{"bad_external_escape.onnx", "leaves the model's folder"},
        BadCase{"no_such_model.onnx", "no such file"}),
    [](const auto& param_info) {
      std::string name = param_info.param.file;
      name = name.substr(0, name.find('.'));
      return name;
    });

}  // namespace
}  // namespace memledger
