// Golden text forms of the imported test models, and round trips import → export →
// import that must give the same text. MEMLEDGER_UPDATE_GOLDEN=1 rewrites the golden files
// (tests/golden/onnx/<model>.txt); review the diff before committing it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "memledger/core/error.h"
#include "memledger/ir/affine.h"
#include "memledger/ir/printer.h"
#include "memledger/onnx/export.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(MEMLEDGER_SOURCE_DIR) + "/tests/data/onnx/";
const std::string kGolden = std::string(MEMLEDGER_SOURCE_DIR) + "/tests/golden/onnx/";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class GoldenModel : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenModel, TextFormMatchesAndRoundTrips) {
  const std::string stem = GetParam();
  const Graph g = import_onnx_file(kData + stem + ".onnx");
  const std::string text = print_graph(g);
  const std::string golden_path = kGolden + stem + ".txt";
  if (std::getenv("MEMLEDGER_UPDATE_GOLDEN")) {
    std::ofstream(golden_path, std::ios::binary) << text;
  } else {
    ASSERT_TRUE(fs::exists(golden_path)) << golden_path << " missing; run with MEMLEDGER_UPDATE_GOLDEN=1";
    EXPECT_EQ(text, read_text(golden_path)) << "golden " << golden_path;
  }
  const Graph again = import_onnx_bytes(export_onnx_bytes(g), {}, stem + " (exported)");
  EXPECT_EQ(print_graph(again), text);
}

INSTANTIATE_TEST_SUITE_P(Onnx, GoldenModel,
                         ::testing::Values("conv_bn_relu", "affine_distinct", "affine_c_eq_w", "affine_c_eq_w_stated",
                                           "affine_vector_w", "affine_c_eq_h", "typed_and_constant", "nhwc_input",
                                           "custom_op", "quantized_per_axis", "external_data", "qdq_block",
                                           "qlinear_ops", "integer_ops"));

TEST(OnnxExport, AffineIsLoweredToMulAndAdd) {
  Graph g;
  const AxisRoles nchw{AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW};
  const ValueId x = g.add_input({.name = "x", .shape = {1, 3, 2, 2}, .roles = nchw});
  Tensor scale(DType::kFloat32, {1, 3, 1, 1});
  scale.data<float>()[2] = 2.0f;
  const ValueId s = g.add_constant("scale", scale, nchw);
  const ValueId b = g.add_constant("bias", Tensor(DType::kFloat32, {1, 3, 1, 1}), nchw);
  g.mark_output(add_affine(g, x, s, b, AffineRule::kCurrent, "y"));
  const Graph back = import_onnx_bytes(export_onnx_bytes(g));
  ASSERT_EQ(back.order().size(), 2u);
  EXPECT_EQ(back.node(back.order()[0]).op, "Mul");
  EXPECT_EQ(back.node(back.order()[1]).op, "Add");
  EXPECT_EQ(back.value(back.outputs()[0]).name, "y");
  // Mul+Add states no roles; the file carries them as dimension denotations.
  EXPECT_EQ(roles_to_string(back.value(back.outputs()[0]).roles), "NCHW");
}

TEST(OnnxExport, WritesThroughATemporaryFileAndNeverOverTheInput) {
  const fs::path dir = fs::path(MEMLEDGER_BINARY_DIR) / "onnx_export_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string input = (dir / "in.onnx").string();
  fs::copy_file(kData + "conv_bn_relu.onnx", input);
  const Graph g = import_onnx_file(input);
  const std::string before = read_text(input);
  EXPECT_THROW(export_onnx_file(g, input, input), Error);
  EXPECT_THROW(export_onnx_file(g, (dir / "." / "in.onnx").string(), input), Error);
  EXPECT_EQ(read_text(input), before);
  const std::string output = (dir / "out.onnx").string();
  export_onnx_file(g, output, input);
  EXPECT_EQ(print_graph(import_onnx_file(output)), print_graph(g));
  EXPECT_THROW(export_onnx_file(g, (dir / "no_such_dir" / "out.onnx").string(), input), Error);
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2u);  // in.onnx and out.onnx: no temporary left behind
}

}  // namespace
}  // namespace memledger
