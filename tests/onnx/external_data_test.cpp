// onnx/external_data: the files a model names as external data, found without loading it,
// as the commands protect them (tests/hostile has the refusals they lead to).
#include "memledger/onnx/external_data.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace memledger {
namespace {

namespace fs = std::filesystem;

std::string data_path(const std::string& name) {
  return std::string(MEMLEDGER_SOURCE_DIR) + "/tests/data/onnx/" + name;
}

TEST(ExternalData, NamesTheWeightsFileBesideTheModel) {
  const auto files = external_data_files(data_path("external_data.onnx"));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename(), "external_weights.bin");
  EXPECT_TRUE(fs::equivalent(files[0], data_path("external_weights.bin")));
  // A location that leaves the folder is still listed (the import refuses it; protecting
  // it costs nothing).
  EXPECT_FALSE(external_data_files(data_path("bad_external_escape.onnx")).empty());
}

TEST(ExternalData, AModelWithoutAnyAndNonModelsGiveNothing) {
  EXPECT_TRUE(external_data_files(data_path("affine_distinct.onnx")).empty());
  EXPECT_TRUE(external_data_files(data_path("no_such_model.onnx")).empty());
  EXPECT_TRUE(external_data_files(std::string(MEMLEDGER_SOURCE_DIR) + "/tests/data").empty());  // a folder
  const fs::path garbage = fs::temp_directory_path() / "memledger_external_garbage.onnx";
  {
    std::ofstream out(garbage, std::ios::binary);
    out << "\x3a\xff\xff\xff\xff\x0f garbage";  // graph field with a length past the end
  }
  EXPECT_TRUE(external_data_files(garbage.string()).empty());
  fs::remove(garbage);
}

}  // namespace
}  // namespace memledger
