// The op table's shape rules against libonnx's inference (onnx/import.h,
// cross_check_shapes): on every ONNX backend node test the importer accepts, on every
// corpus model, and — where MEMLEDGER_SWEEP_DIR names the sweep export — on every sweep
// model, each node output libonnx types statically must have the table's type. The
// counts and every disagreement are printed; a disagreement fails the test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "corpus.h"
#include "memledger/core/error.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

struct Totals {
  int models = 0, compared = 0, unknown = 0, refused_by_libonnx = 0;
  std::vector<std::string> disagreements;

  void add(const fs::path& model) {
    ShapeCrossCheck c;
    try {
      c = cross_check_shapes(model.string());
    } catch (const Error&) {
      return;  // the importer refuses it (the conformance tests count those)
    }
    ++models;
    compared += c.compared;
    unknown += c.libonnx_unknown;
    if (!c.libonnx_error.empty()) ++refused_by_libonnx;
    for (const auto& d : c.disagreements) disagreements.push_back(model.string() + ": " + d);
  }
  void report(const char* what) const {
    std::printf(
        "%s: %d models, %d values compared, %d without a static type from libonnx, %d refused by libonnx, "
        "%zu disagreements\n",
        what, models, compared, unknown, refused_by_libonnx, disagreements.size());
    for (const auto& d : disagreements) std::printf("  %s\n", d.c_str());
  }
};

std::vector<fs::path> models_in(const fs::path& dir, bool nested) {
  std::vector<fs::path> models;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path p = nested ? entry.path() / "model.onnx" : entry.path();
    if (p.extension() == ".onnx" && fs::is_regular_file(p)) models.push_back(p);
  }
  std::sort(models.begin(), models.end());
  return models;
}

TEST(ShapeCrossCheck, BackendNodeTestsAgreeWithLibonnx) {
  const fs::path dir = "/usr/share/libonnx-testdata/data/node";
  if (!fs::is_directory(dir)) ML_SKIP_OR_FAIL("ONNX backend test data not installed at " + dir.string());
  Totals t;
  for (const fs::path& model : models_in(dir, true)) t.add(model);
  t.report("backend node tests");
  EXPECT_GT(t.models, 700);
  EXPECT_GT(t.compared, 1000);
  EXPECT_TRUE(t.disagreements.empty());
}

TEST(ShapeCrossCheck, CorpusModelsAgreeWithLibonnx) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  Totals t;
  for (const fs::path& model : models_in(dir, false)) t.add(model);
  t.report("corpus");
  EXPECT_GE(t.models, 12);
  EXPECT_EQ(t.refused_by_libonnx, 0);
  EXPECT_TRUE(t.disagreements.empty());
}

// The sweep export (75 models, minutes to check): only where MEMLEDGER_SWEEP_DIR is set.
TEST(ShapeCrossCheck, SweepModelsAgreeWithLibonnx) {
  const char* env = std::getenv("MEMLEDGER_SWEEP_DIR");
  if (!env || !*env) GTEST_SKIP() << "MEMLEDGER_SWEEP_DIR is not set (the sweep export, scripts/corpus/sweep.py)";
  Totals t;
  for (const fs::path& model : models_in(env, false)) t.add(model);
  t.report("sweep");
  EXPECT_GT(t.models, 0);
  EXPECT_TRUE(t.disagreements.empty());
}

}  // namespace
}  // namespace memledger
