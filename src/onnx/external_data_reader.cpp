#include "onnx/external_data_reader.h"

#include <algorithm>
#include <filesystem>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "onnx/proto_tensor.h"

namespace memledger::onnx_io {

namespace fs = std::filesystem;
using onnx::TensorProto;

std::shared_ptr<const MappedFile> ExternalData::file(const std::string& path) {
  auto& mapped = files_[path];
  if (!mapped) mapped = MappedFile::open(path);
  return mapped;
}

std::optional<Tensor> ExternalData::resolve(TensorProto& tensor) {
  const std::string what = "initializer '" + tensor.name() + "'";
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : tensor.external_data()) {
    try {
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") offset = std::stoll(entry.value());
      if (entry.key() == "length") length = std::stoll(entry.value());
    } catch (const std::exception&) {
      fail("{}: external data {} '{}' is not a number", what, entry.key(), entry.value());
    }
  }
  if (model_dir_.empty()) fail("{}: external data needs the model's folder (import from a file)", what);
  if (location.empty()) fail("{}: external data without a location", what);
  const fs::path relative(location);
  if (relative.is_absolute()) fail("{}: external data location '{}' must be relative to the model", what, location);
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::path(model_dir_), ec);
  const fs::path file_path = fs::weakly_canonical(dir / relative, ec);
  if (ec) fail("{}: external data location '{}' cannot be resolved", what, location);
  const auto [dir_end, file_it] = std::mismatch(dir.begin(), dir.end(), file_path.begin(), file_path.end());
  if (dir_end != dir.end() || file_path == dir)
    fail("{}: external data location '{}' leaves the model's folder", what, location);
  const auto type = dtype_from_onnx_code(tensor.data_type());
  if (!type) fail("{}: element type code {} is not supported", what, tensor.data_type());
  Shape shape(tensor.dims().begin(), tensor.dims().end());
  for (int64_t d : shape)
    if (d < 0) fail("{}: negative extent in shape {}", what, shape_to_string(shape));
  const int64_t expected = ceil_div(checked_mul(element_count(shape, what), dtype_bits(*type), what), 8);
  if (length >= 0 && length != expected)
    fail("{}: external data length {} does not match shape {} of {} ({} bytes)", what, length, shape_to_string(shape),
         dtype_name(*type), expected);
  if (!fs::is_regular_file(file_path, ec)) fail("{}: external data file '{}' cannot be read", what, location);
  const auto size = fs::file_size(file_path, ec);
  if (ec) fail("{}: external data file '{}' cannot be read", what, location);
  if (offset < 0 || checked_add(offset, expected, what) > static_cast<int64_t>(size))
    fail("{}: external data file '{}' holds {} bytes, too few for {} bytes at offset {}", what, location, size,
         expected, offset);
  if (expected > budget_) fail("{}: external data of {} bytes exceeds the size bound", what, expected);
  budget_ -= expected;

  std::shared_ptr<const MappedFile> mapped;
  try {
    mapped = file(file_path.string());
  } catch (const Error&) {
    fail("{}: external data file '{}' cannot be read", what, location);
  }
  // The file may have changed between the size check and the mapping.
  if (checked_add(offset, expected, what) > mapped->size())
    fail("{}: external data file '{}' holds {} bytes, too few for {} bytes at offset {}", what, location,
         mapped->size(), expected, offset);
  const std::span<std::byte> bytes = mapped->bytes(offset, expected);
  const bool packed = *type == DType::kInt4 || *type == DType::kUInt4;
  const auto align = static_cast<uintptr_t>(host_element_bytes(*type));
  if (!packed && expected >= map_from_) {
    if (reinterpret_cast<uintptr_t>(bytes.data()) % align == 0)
      return Tensor::view(*type, std::move(shape), std::move(mapped), offset);
    Tensor copy(*type, std::move(shape));  // misaligned: held once, on the heap
    mapped->copy_out(bytes, copy.bytes());
    return copy;
  }
  tensor.clear_external_data();
  tensor.set_data_location(TensorProto::DEFAULT);
  // assign, not set_raw_data(pointer, size): protobuf's SetBytes builds a temporary string
  // and copies it again, two copies of the bytes at once.
  tensor.mutable_raw_data()->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  mapped->release(bytes);  // the copy is what the importer reads from now on
  return std::nullopt;
}

}  // namespace memledger::onnx_io
