// Parsing a big model file without copying its weights: the file is mapped, and the
// protobuf parser is given the model with every initializer's raw_data of at least
// ImportOptions::map_tensors_from bytes cut out (the wire format is walked, not parsed, to find
// them: ModelProto.graph → GraphProto.initializer → TensorProto.raw_data). Those bytes
// stay in the mapping, where the importer views them in place (or copies the ones it
// cannot: packed int4, misaligned). Private to src/onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>

#include "memledger/core/mapped_file.h"

namespace memledger::onnx_io {

struct MappedModel {
  onnx::ModelProto model;
  std::shared_ptr<const MappedFile> file;
  // Initializer index (in file order) → file offset and length of the raw_data cut out.
  std::unordered_map<int, std::pair<int64_t, int64_t>> raw_data;
};

// Parses the mapped `file` into `out`; false when the wire format is not the plain one this
// walker knows (the caller then parses the file the ordinary way, which gives the error).
bool parse_mapped_model(std::shared_ptr<const MappedFile> file, int64_t map_from, MappedModel& out);

}  // namespace memledger::onnx_io
