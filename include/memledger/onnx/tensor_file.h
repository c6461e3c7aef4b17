// Tensors in files: ONNX TensorProto (.pb, as in ONNX's own test data) and NumPy (.npy),
// chosen by the extension. Reading refuses malformed or truncated files with an Error
// naming the file; writing goes through a temporary file and a rename, so a failed write
// leaves nothing behind. It sits in onnx/, the stage of file formats, so that .pb files go
// through the one TensorProto codec the importer and exporter use (onnx/proto_tensor);
// exec runs on tensors and reads no files (only the programs and tests read these).
#pragma once

#include <cstdint>
#include <string>

#include "memledger/core/tensor.h"

namespace memledger {

struct NamedTensor {
  std::string name;  // TensorProto's name; empty for .npy
  Tensor tensor;
};

// The file's kind and size are checked before it is read: a directory, FIFO or device, or
// a file over `max_bytes`, is an Error naming it.
NamedTensor read_tensor_file(const std::string& path, int64_t max_bytes = int64_t{2} << 30);
// `name` is stored in a .pb (TensorProto.name) and ignored for .npy.
void write_tensor_file(const std::string& path, const Tensor& tensor, const std::string& name = "");

// The format by extension: true for .pb, false for .npy; an Error for anything else.
bool is_tensor_proto_path(const std::string& path);

// Decoding and encoding in memory (for tests and the arena runner's reports).
NamedTensor parse_tensor_proto(const std::string& bytes, const std::string& what);
NamedTensor parse_npy(const std::string& bytes, const std::string& what);
std::string serialize_tensor_proto(const Tensor& tensor, const std::string& name);
std::string serialize_npy(const Tensor& tensor);

}  // namespace memledger
