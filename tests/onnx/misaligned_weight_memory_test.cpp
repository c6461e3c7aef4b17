// The tool's own memory on a weight protobuf put at a misaligned offset (vgg's first fc:
// 411 MB, copied because floats cannot be read where they lie): importing and running the
// model once holds the weight once. Measured as the process's peak RSS over the import and
// the run (/proc/self/clear_refs resets the peak, VmHWM reads it): a second copy of the
// weight (protobuf's raw_data beside the tensor, the file's pages beside the copy, a reorder
// of the weight for the Gemm) would add its whole size.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "memledger/device/profile.h"
#include "memledger/exec/executor.h"
#include "memledger/onnx/export.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"); -1 when it cannot be read.
int64_t status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  return -1;
}

// Resets the peak RSS to the current RSS; false where the kernel does not let us.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return out.good();
}

constexpr int64_t kFeatures = 4096;  // the weight: 4096 × 4096 floats, 64 MiB
constexpr int64_t kWeightBytes = kFeatures * kFeatures * 4;

class MisalignedGemmWeight : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("memledger_misaligned_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // The weight's name shifts its raw_data in the file: the first name that puts it at an
    // offset no float may be read at.
    for (std::string name = "fc.weight"; name.size() < 16; name += "_") {
      Graph g;
      const ValueId x = g.add_input({.name = "x", .shape = {1, kFeatures}});
      Tensor w(DType::kFloat32, {kFeatures, kFeatures});
      auto values = w.data<float>();
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = 0.001f * static_cast<float>(static_cast<int>(i % 997) - 498);
      const ValueId wid = g.add_constant(name, w);
      const ValueId y = g.add_value({.name = "y", .shape = {1, kFeatures}});
      g.add_node(
          {.name = "fc", .op = "Gemm", .inputs = {x, wid}, .outputs = {y}, .attributes = {{"transB", int64_t{1}}}});
      g.mark_output(y);
      const std::string bytes = export_onnx_bytes(g);
      const size_t at = bytes.find(std::string(reinterpret_cast<const char*>(w.bytes().data()), 256));
      ASSERT_NE(at, std::string::npos);
      if (at % 4 == 0) continue;
      std::ofstream(path(), std::ios::binary) << bytes;
      weight_ = name;
      return;
    }
    FAIL() << "no weight name put the raw_data at a misaligned offset";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "model.onnx").string(); }
  std::filesystem::path dir_;
  std::string weight_;
};

TEST_F(MisalignedGemmWeight, ASingleRunHoldsTheWeightOnce) {
  if (!reset_peak_rss()) GTEST_SKIP() << "/proc/self/clear_refs cannot reset the peak RSS here";
  const int64_t before = status_bytes("VmRSS");
  ASSERT_GT(before, 0);
  std::vector<Tensor> out;
  {
    const Graph g = import_onnx_file(path());  // 64 MiB: mapped (ImportOptions::map_files_from)
    const Value* w = nullptr;
    for (size_t i = 0; i < g.value_count(); ++i)
      if (g.value(ValueId{static_cast<int32_t>(i)}).name == weight_) w = &g.value(ValueId{static_cast<int32_t>(i)});
    ASSERT_TRUE(w && w->is_constant());
    EXPECT_FALSE(w->constant->is_mapped());  // misaligned: a heap copy
    EXPECT_EQ(static_cast<int64_t>(w->constant->bytes().size()), kWeightBytes);
    // What `memledger run` does once: no prepacking, mapped weights let go after use.
    const ExecOptions once{.kernels = KernelSet::kFast, .prepack_weights = false, .release_weights_after_use = true};
    // The Gemm reads the weight as it lies: no workspace to reorder it into.
    EXPECT_LT(contract_source(once)(g, g.order().front(), builtin_profile("host")).workspace_bytes, kWeightBytes / 16);
    Tensor x(DType::kFloat32, {1, kFeatures});
    for (int64_t i = 0; i < kFeatures; ++i) x.data<float>()[static_cast<size_t>(i)] = 0.01f * static_cast<float>(i % 7);
    Executor executor(g, once);
    EXPECT_EQ(executor.prepacked_bytes(), 0);
    out = executor.run({x});
  }
  const int64_t peak = status_bytes("VmHWM");
  ASSERT_EQ(out.size(), 1u);
  // y[0] = Σ_k x[k]·w[0][k], w[0][k] = 0.001·(k − 498) for k < 997, then the pattern repeats.
  double expected = 0;
  for (int64_t k = 0; k < kFeatures; ++k)
    expected += 0.01 * static_cast<double>(k % 7) * 0.001 * static_cast<double>(static_cast<int>(k % 997) - 498);
  EXPECT_NEAR(out[0].data<float>()[0], expected, 1e-3 * (1 + std::abs(expected)));
  // One copy of the weight plus the sanitizers' shadow and allocator slack; a second copy
  // would pass kWeightBytes * 2.
  EXPECT_LT(peak - before, kWeightBytes * 3 / 2) << "peak RSS " << peak << " B, " << before << " B before the import";
}

}  // namespace
}  // namespace memledger
