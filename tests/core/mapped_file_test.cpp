// Tensors viewing a mapped file: values in place, copies owned, writes private to the
// process, pages handed back only while nobody wrote them.
#include "memledger/core/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/core/tensor.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("memledger_mapped_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    // Four pages of floats 0, 1, 2, ... after an 8-byte header.
    values_.resize(4 * 4096 / sizeof(float));
    for (size_t i = 0; i < values_.size(); ++i) values_[i] = static_cast<float>(i);
    std::ofstream out(path_, std::ios::binary);
    out.write("headerXY", 8);
    out.write(reinterpret_cast<const char*>(values_.data()), static_cast<std::streamsize>(values_.size() * 4));
  }
  void TearDown() override { fs::remove(path_); }
  fs::path path_;
  std::vector<float> values_;
};

TEST_F(MappedFileTest, TensorViewsTheFileInPlace) {
  const auto file = MappedFile::open(path_.string());
  EXPECT_EQ(file->size(), static_cast<int64_t>(8 + values_.size() * 4));
  const auto n = static_cast<int64_t>(values_.size());
  const Tensor t = Tensor::view(DType::kFloat32, {n}, file, 8);
  EXPECT_TRUE(t.is_mapped());
  EXPECT_EQ(t.bytes().data(), file->bytes(8, 4).data());  // no copy
  EXPECT_EQ(t.data<float>()[0], 0.0f);
  EXPECT_EQ(t.data<float>()[n - 1], static_cast<float>(n - 1));
  // A copy owns its bytes and compares equal.
  const Tensor copy = t;
  EXPECT_FALSE(copy.is_mapped());
  EXPECT_NE(copy.bytes().data(), t.bytes().data());
  EXPECT_EQ(copy, t);
}

TEST_F(MappedFileTest, ReleasedPagesComeBackFromTheFile) {
  const auto file = MappedFile::open(path_.string());
  const auto n = static_cast<int64_t>(values_.size());
  const Tensor t = Tensor::view(DType::kFloat32, {n}, file, 8);
  double sum = 0;
  for (float v : t.data<float>()) sum += v;
  // The view starts 8 bytes into the first page: the three whole pages after it go back.
  EXPECT_EQ(t.release_pages(), 3 * 4096);
  double again = 0;
  for (float v : t.data<float>()) again += v;
  EXPECT_EQ(again, sum);
  EXPECT_EQ(t.data<float>()[n / 2], static_cast<float>(n / 2));
}

TEST_F(MappedFileTest, WritesStayInTheProcessAndAreNeverReleased) {
  const auto file = MappedFile::open(path_.string());
  const auto n = static_cast<int64_t>(values_.size());
  Tensor t = Tensor::view(DType::kFloat32, {n}, file, 8);
  t.data<float>()[2000] = -1.0f;
  EXPECT_EQ(t.release_pages(), 0);  // written: the write would be lost
  EXPECT_EQ(t.data<float>()[2000], -1.0f);
  const Tensor fresh = Tensor::view(DType::kFloat32, {n}, MappedFile::open(path_.string()), 8);
  EXPECT_EQ(fresh.data<float>()[2000], 2000.0f);  // the file is unchanged
  // Heap tensors have nothing to release.
  EXPECT_EQ(Tensor(DType::kFloat32, {n}).release_pages(), 0);
}

TEST_F(MappedFileTest, RefusesWhatIsNotARegularFile) {
  EXPECT_THROW(MappedFile::open((path_.string() + ".missing")), Error);
  EXPECT_THROW(MappedFile::open(fs::temp_directory_path().string()), Error);
}

}  // namespace
}  // namespace memledger
