// ONNX external data (models over protobuf's 2 GiB keep their weights in a file beside the
// model): every location is checked to stay inside the model's folder, every length
// against the tensor's shape, the file's size and a bound on all of them together. Each
// file is mapped once; a weight whose bytes can serve in place (host layout, aligned to its
// element size, big enough) becomes a Tensor viewing the mapping, so the weights are never
// copied onto the heap. Private to src/onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "memledger/core/mapped_file.h"
#include "memledger/core/tensor.h"

namespace memledger::onnx_io {

class ExternalData {
 public:
  // `model_dir` is where locations are resolved (empty: external data is refused);
  // `budget` bounds the bytes of all tensors together (ImportOptions::max_external_bytes);
  // tensors smaller than `map_from` bytes (shape constants shape inference may read) go
  // into raw_data.
  ExternalData(std::string model_dir, int64_t budget, int64_t map_from)
      : model_dir_(std::move(model_dir)), budget_(budget), map_from_(map_from) {}

  // Resolves `tensor` (data_location EXTERNAL): the values viewing the mapped file; a heap
  // copy (MappedFile::copy_out: held once) where they are misaligned for the type; or, for
  // packed int4 and tensors under `map_from`, nullopt after its bytes were copied into
  // raw_data (and the data location reset). An Error names the initializer.
  std::optional<Tensor> resolve(onnx::TensorProto& tensor);

 private:
  std::shared_ptr<const MappedFile> file(const std::string& path);
  std::string model_dir_;
  int64_t budget_;
  int64_t map_from_;
  std::map<std::string, std::shared_ptr<const MappedFile>> files_;
};

}  // namespace memledger::onnx_io
