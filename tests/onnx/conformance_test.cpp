// Import conformance on real models: every node test of ONNX's backend test data (Debian
// package libonnx-testdata) and every model of the torchvision corpus (the `corpus` target).
// Each model imports — and then survives export → import with the same text form — or is
// refused with an Error naming the file and the reason. The refused cases and their
// reasons go to <build>/onnx_backend_refused.txt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "corpus.h"
#include "memledger/core/error.h"
#include "memledger/ir/printer.h"
#include "memledger/onnx/export.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

const fs::path kBackendNodeDir = "/usr/share/libonnx-testdata/data/node";

// The reason of a refusal without the case-specific part: what the counts group by.
std::string reason_class(const std::string& message) {
  std::string m = message.substr(message.find(": ") + 2);
  m = std::regex_replace(m, std::regex("'[^']*'"), "'…'");
  m = std::regex_replace(m, std::regex("[0-9]+"), "N");
  return m.substr(0, 110);
}

TEST(OnnxConformance, BackendNodeTestsImportOrAreRefusedByName) {
  if (!fs::is_directory(kBackendNodeDir))
    GTEST_SKIP() << "ONNX backend test data not installed at " << kBackendNodeDir
                 << " (apt-get install libonnx-testdata)";
  std::vector<fs::path> models;
  for (const auto& entry : fs::directory_iterator(kBackendNodeDir))
    if (fs::exists(entry.path() / "model.onnx")) models.push_back(entry.path() / "model.onnx");
  std::sort(models.begin(), models.end());
  ASSERT_GT(models.size(), 100u);

  int imported = 0, round_tripped = 0;
  std::vector<std::string> refused;
  std::map<std::string, int> by_reason;
  for (const fs::path& model : models) {
    Graph g;
    try {
      g = import_onnx_file(model.string());
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(model.string() + ": ", 0), 0u) << message;
      refused.push_back(model.parent_path().filename().string() + "\t" + message.substr(model.string().size() + 2));
      ++by_reason[reason_class(message)];
      continue;
    }
    ++imported;
    try {
      const Graph again = import_onnx_bytes(export_onnx_bytes(g), {}, model.string() + " (exported)");
      EXPECT_EQ(print_graph(again), print_graph(g)) << model;
      ++round_tripped;
    } catch (const Error& e) {
      ADD_FAILURE() << "round trip of " << model << ": " << e.what();
    }
  }
  const fs::path report = fs::path(MEMLEDGER_BINARY_DIR) / "onnx_backend_refused.txt";
  std::ofstream out(report);
  out << "# ONNX backend node tests refused by memledger's importer (" << refused.size() << " of " << models.size()
      << ")\n";
  for (const auto& line : refused) out << line << "\n";
  std::printf("backend node tests: %zu models, %d imported (%d round-tripped), %zu refused; list in %s\n",
              models.size(), imported, round_tripped, refused.size(), report.c_str());
  std::vector<std::pair<int, std::string>> reasons;
  for (const auto& [reason, count] : by_reason) reasons.push_back({count, reason});
  std::sort(reasons.rbegin(), reasons.rend());
  for (const auto& [count, reason] : reasons) std::printf("  %4d  %s\n", count, reason.c_str());
  EXPECT_GT(imported, static_cast<int>(models.size()) / 2);
}

TEST(OnnxConformance, EveryCorpusModelImportsAndRoundTrips) {
  ML_CORPUS_DIR_OR_SKIP(corpus);
  std::vector<fs::path> models;
  for (const auto& entry : fs::directory_iterator(corpus))
    if (entry.path().extension() == ".onnx") models.push_back(entry.path());
  std::sort(models.begin(), models.end());
  ASSERT_FALSE(models.empty()) << "the corpus at " << corpus << " has no .onnx files";
  for (const fs::path& model : models) {
    try {
      const Graph g = import_onnx_file(model.string());
      const Graph again = import_onnx_bytes(export_onnx_bytes(g), {}, model.string() + " (exported)");
      EXPECT_EQ(print_graph(again), print_graph(g)) << model;
      std::printf("corpus: %-40s %4zu nodes, round trip ok\n", model.filename().c_str(), g.order().size());
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

}  // namespace
}  // namespace memledger
