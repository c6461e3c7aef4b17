// libFuzzer target for tensor files: the first byte picks .npy or TensorProto (.pb), the
// rest is the file. Any bytes must decode into a tensor whose size matches its shape, or be
// refused with a memledger::Error; a decoded tensor must encode and decode to itself.
#include <cstddef>
#include <cstdint>
#include <string>

#include "memledger/core/error.h"
#include "memledger/onnx/tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool npy = data[0] & 1;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const memledger::NamedTensor t =
        npy ? memledger::parse_npy(bytes, "fuzz.npy") : memledger::parse_tensor_proto(bytes, "fuzz.pb");
    if (npy) {
      const memledger::NamedTensor again = memledger::parse_npy(memledger::serialize_npy(t.tensor), "again.npy");
      if (!(again.tensor == t.tensor)) __builtin_trap();
    } else {  // the one TensorProto codec (onnx/proto_tensor) packs int4 back as it read it
      const auto again = memledger::parse_tensor_proto(memledger::serialize_tensor_proto(t.tensor, t.name), "again");
      if (!(again.tensor == t.tensor)) __builtin_trap();
    }
  } catch (const memledger::Error&) {
  }
  return 0;
}
