// libFuzzer target for the ONNX importer (DESIGN.md §9): any bytes must either import or
// be refused with a memledger::Error — never crash, hang, leak or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memledger/core/error.h"
#include "memledger/onnx/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  memledger::ImportOptions options;
  options.max_bytes = int64_t{1} << 20;  // the fuzzer's inputs are small; so must be their claims
  try {
    memledger::import_onnx_bytes(std::string_view(reinterpret_cast<const char*>(data), size), options, "fuzz");
  } catch (const memledger::Error&) {
    // A refusal with a message is the expected outcome for most inputs.
  }
  return 0;
}
