// The one output mechanism: outputs are written together or not at all, never over an
// input, a symbolic link or a special file; reads check the file's kind and size first.
#include "memledger/core/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/core/text.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

class OutputSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("memledger_output_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path at(const std::string& name) const { return dir_ / name; }
  void write(const std::string& name, const std::string& text) const { std::ofstream(at(name)) << text; }
  std::string read(const std::string& name) const { return read_input_file(at(name).string(), 1 << 20); }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  fs::path dir_;
};

TEST_F(OutputSetTest, CommitsEveryOutputTogether) {
  OutputSet outputs;
  outputs.declare(at("a.json"), "--json");
  outputs.declare(at("b.csv"), "--csv");
  outputs.stage(at("a.json"), "A");
  EXPECT_FALSE(fs::exists(at("a.json")));  // nothing in place before the commit
  outputs.stage(at("b.csv"), "B");
  outputs.commit();
  EXPECT_EQ(read("a.json"), "A");
  EXPECT_EQ(read("b.csv"), "B");
  EXPECT_EQ(entries(), 2u);  // no temporary left
}

TEST_F(OutputSetTest, AnUncommittedSetLeavesNothing) {
  {
    OutputSet outputs;
    outputs.stage(at("a.json"), "A");
    outputs.declare(at("sub/deeper/x.npy"), "--output-dir", true);
    outputs.stage(at("sub/deeper/x.npy"), "X");
  }
  EXPECT_EQ(entries(), 0u);  // temporaries and the folders it created are gone
}

TEST_F(OutputSetTest, RefusesAnInputByPathAndByHardLink) {
  write("in.toml", "name = 'x'");
  fs::create_hard_link(at("in.toml"), at("hard.json"));
  OutputSet outputs;
  outputs.protect_input(at("in.toml"));
  EXPECT_THROW(outputs.declare(at("in.toml"), "--json"), Error);
  EXPECT_THROW(outputs.declare(at("hard.json"), "--json"), Error);
  OutputSet late;  // an input named after the output was declared
  late.declare(at("in.toml"), "--json");
  EXPECT_THROW(late.protect_input(at("in.toml")), Error);
  EXPECT_EQ(read("in.toml"), "name = 'x'");
}

TEST_F(OutputSetTest, RefusesLinksSpecialFilesFoldersAndDuplicates) {
  write("model.onnx", "M");
  fs::create_symlink(at("model.onnx"), at("link.json"));
  ASSERT_EQ(::mkfifo(at("fifo.json").c_str(), 0600), 0);
  fs::create_directory(at("folder"));
  OutputSet outputs;
  try {
    outputs.declare(at("link.json"), "--json");
    FAIL() << "a symbolic link was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  EXPECT_THROW(outputs.declare(at("fifo.json"), "--json"), Error);
  EXPECT_THROW(outputs.declare(at("folder"), "--json"), Error);
  EXPECT_THROW(outputs.declare("/dev/null", "--json"), Error);
  EXPECT_THROW(outputs.declare(at("no/such/x.csv"), "--csv"), Error);
  outputs.declare(at("a.json"), "--json");
  EXPECT_THROW(outputs.declare(dir_ / "." / "a.json", "--html"), Error);
  EXPECT_TRUE(fs::is_symlink(at("link.json")));
  EXPECT_EQ(read("model.onnx"), "M");
}

// Two outputs that are one existing file under two names (a hard link) are one output; so are
// two spellings of one new path, however many outputs were declared before them.
TEST_F(OutputSetTest, RefusesTwoNamesOfOneFile) {
  write("a.json", "A");
  fs::create_hard_link(at("a.json"), at("b.json"));
  OutputSet outputs;
  for (int i = 0; i < 100; ++i) outputs.declare(at("y" + std::to_string(i) + ".npy"), "--output-dir");
  outputs.declare(at("a.json"), "--json");
  try {
    outputs.declare(at("b.json"), "--html");
    FAIL() << "a hard link of an output was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the same file as --json"), std::string::npos) << e.what();
  }
  try {
    outputs.declare(dir_ / "." / "y7.npy", "--csv");
    FAIL() << "a second spelling of an output was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the same file as --output-dir"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read("a.json"), "A");
}

TEST_F(OutputSetTest, APredictableTemporaryNameIsNoDanger) {
  // The old scheme wrote OUT.partial, following a link planted there onto the input.
  write("in.onnx", "IN");
  fs::create_symlink(at("in.onnx"), at("out.onnx.partial"));
  write_output_file(at("out.onnx"), "OUT", {at("in.onnx")});
  EXPECT_EQ(read("in.onnx"), "IN");
  EXPECT_EQ(read("out.onnx"), "OUT");
  EXPECT_TRUE(fs::is_symlink(at("out.onnx.partial")));
}

TEST_F(OutputSetTest, ReadsCheckKindAndSizeFirst) {
  write("small.txt", "12345");
  EXPECT_EQ(read_input_file(at("small.txt").string(), 5), "12345");
  EXPECT_THROW(read_input_file(at("small.txt").string(), 4), Error);
  EXPECT_THROW(read_input_file("/dev/zero", 1 << 20), Error);
  EXPECT_THROW(read_input_file(dir_.string(), 1 << 20), Error);
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0600), 0);
  try {
    read_input_file(at("fifo").string(), 1 << 20);  // must not block waiting for a writer
    FAIL() << "a FIFO was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO"), std::string::npos) << e.what();
  }
  try {
    read_input_file(at("missing").string(), 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
  }
}

TEST(TextTest, EscapesControlsAndInvalidUtf8) {
  EXPECT_EQ(escape_for_terminal("conv1"), "conv1");
  EXPECT_EQ(escape_for_terminal("größe→"), "größe→");
  EXPECT_EQ(escape_for_terminal("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(escape_for_terminal("a\nb"), "a\\x0ab");
  EXPECT_EQ(escape_for_terminal("a\nb", true), "a\nb");
  EXPECT_EQ(escape_for_terminal("\xff\xc0\x80"), "\\xff\\xc0\\x80");  // not UTF-8; overlong
  EXPECT_EQ(escape_for_terminal("\xc2\x9b"), "\\xc2\\x9b");           // C1 CSI
  EXPECT_TRUE(is_valid_utf8("größe"));
  EXPECT_FALSE(is_valid_utf8("y\xff"));
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));  // a surrogate
}

}  // namespace
}  // namespace memledger
