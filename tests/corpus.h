// Where the tests find the torchvision corpus (scripts/corpus/, the `corpus` target) and
// what they do without it. One rule for every corpus test: MEMLEDGER_CORPUS_DIR, else
// <build>/corpus; when it is missing the test is skipped, unless MEMLEDGER_REQUIRE_CORPUS=1
// or CI is set (.ci/run sets the first), where a missing corpus is a failure, never a skip.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace memledger::testing {

inline std::filesystem::path corpus_dir() {
  const char* env = std::getenv("MEMLEDGER_CORPUS_DIR");
  return env && *env ? std::filesystem::path(env) : std::filesystem::path(MEMLEDGER_BINARY_DIR) / "corpus";
}

// True where the outside parts the tests use (the corpus, onnxruntime-node) must be there.
inline bool outside_parts_required() {
  const char* require = std::getenv("MEMLEDGER_REQUIRE_CORPUS");
  return (require && std::string(require) == "1") || std::getenv("CI") != nullptr;
}

}  // namespace memledger::testing

// Skips the current test with `message`, or fails it where outside parts are required.
#define ML_SKIP_OR_FAIL(message)                                             \
  do {                                                                       \
    if (::memledger::testing::outside_parts_required()) FAIL() << (message); \
    GTEST_SKIP() << (message);                                               \
  } while (0)

// Declares `dir` as the corpus folder, or skips / fails the test when it has no manifest.
#define ML_CORPUS_DIR_OR_SKIP(dir)                                      \
  const std::filesystem::path dir = ::memledger::testing::corpus_dir(); \
  if (!std::filesystem::exists(dir / "manifest.json"))                  \
  ML_SKIP_OR_FAIL("no corpus at " + dir.string() +                      \
                  ": build it with `cmake --build <build> --target corpus` or set MEMLEDGER_CORPUS_DIR")
