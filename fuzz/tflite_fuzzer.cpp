// libFuzzer target for the .tflite reader (DESIGN.md §9): any bytes must either import or be
// refused with a memledger::Error — never crash, hang, leak or allocate without bound. The
// writer of TFLite Micro's offline plan runs on every model that imports.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "memledger/core/error.h"
#include "memledger/tflite/import.h"
#include "memledger/tflite/offline_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Flatbuffers read scalars in place: aligned as a file read into memory is.
  std::vector<uint64_t> aligned((size + 7) / 8);
  if (size) std::memcpy(aligned.data(), data, size);
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(aligned.data()), size);
  try {
    const memledger::TfliteModel model = memledger::import_tflite_bytes(bytes, "fuzz", {.max_bytes = int64_t{1} << 20});
    memledger::OfflinePlan plan;
    plan.offsets.assign(model.tensor_values.size(), -1);
    const std::vector<uint8_t> written = memledger::write_offline_plan(bytes, plan, "fuzz");
    std::vector<uint64_t> again((written.size() + 7) / 8);
    std::memcpy(again.data(), written.data(), written.size());
    memledger::read_offline_plan({reinterpret_cast<const uint8_t*>(again.data()), written.size()}, "fuzz");
  } catch (const memledger::Error&) {
    // A refusal with a message is the expected outcome for most inputs.
  }
  return 0;
}
