#include "memledger/onnx/external_data.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/wire_format_lite.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;
using google::protobuf::io::CodedInputStream;
using WireFormat = google::protobuf::internal::WireFormatLite;

// Field numbers of onnx.proto3 on the way to an external tensor's location.
constexpr int kModelGraph = 7;                 // ModelProto.graph
constexpr int kGraphInitializer = 5;           // GraphProto.initializer
constexpr int kTensorExternalData = 13;        // TensorProto.external_data
constexpr int kEntryKey = 1, kEntryValue = 2;  // StringStringEntryProto

bool delimited(uint32_t tag, int field) {
  return WireFormat::GetTagFieldNumber(tag) == field &&
         WireFormat::GetTagWireType(tag) == WireFormat::WIRETYPE_LENGTH_DELIMITED;
}

// Reads a length-delimited field's body with `read` inside its limit; false on a broken
// stream.
template <typename Read>
bool nested(CodedInputStream& in, Read read) {
  uint32_t length = 0;
  if (!in.ReadVarint32(&length)) return false;
  const auto limit = in.PushLimit(static_cast<int>(std::min<uint32_t>(length, INT_MAX)));
  const bool ok = read();
  in.PopLimit(limit);
  return ok;
}

bool skip(CodedInputStream& in, uint32_t tag) { return WireFormat::SkipField(&in, tag); }

// One StringStringEntryProto: its value when its key is "location".
bool entry(CodedInputStream& in, std::string& location) {
  std::string key, value;
  while (uint32_t tag = in.ReadTag()) {
    if (delimited(tag, kEntryKey) || delimited(tag, kEntryValue)) {
      std::string& into = WireFormat::GetTagFieldNumber(tag) == kEntryKey ? key : value;
      uint32_t length = 0;
      if (!in.ReadVarint32(&length) || length > 4096 || !in.ReadString(&into, static_cast<int>(length))) return false;
    } else if (!skip(in, tag)) {
      return false;
    }
  }
  if (key == "location") location = value;
  return true;
}

bool tensor(CodedInputStream& in, std::vector<std::string>& locations) {
  while (uint32_t tag = in.ReadTag()) {
    if (delimited(tag, kTensorExternalData)) {
      std::string location;
      if (!nested(in, [&] { return entry(in, location); })) return false;
      if (!location.empty()) locations.push_back(location);
    } else if (!skip(in, tag)) {  // raw_data and the rest: skipped, not read
      return false;
    }
  }
  return true;
}

bool graph(CodedInputStream& in, std::vector<std::string>& locations) {
  while (uint32_t tag = in.ReadTag()) {
    if (delimited(tag, kGraphInitializer)) {
      if (!nested(in, [&] { return tensor(in, locations); })) return false;
    } else if (!skip(in, tag)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<fs::path> external_data_files(const std::string& model_path) {
  try {
    check_input_file(model_path, ImportOptions{}.max_bytes);
  } catch (const Error&) {
    return {};  // the import names the problem
  }
  const int fd = ::open(model_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<std::string> locations;
  {
    google::protobuf::io::FileInputStream file(fd);
    CodedInputStream in(&file);
    in.SetTotalBytesLimit(INT_MAX);
    while (uint32_t tag = in.ReadTag()) {
      if (delimited(tag, kModelGraph)) {
        if (!nested(in, [&] { return graph(in, locations); })) break;
      } else if (!skip(in, tag)) {
        break;
      }
    }
  }
  ::close(fd);
  fs::path dir = fs::path(model_path).parent_path();
  if (dir.empty()) dir = ".";
  std::vector<fs::path> files;
  for (const std::string& location : locations) {
    const fs::path file = dir / fs::path(location);
    if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
  }
  return files;
}

}  // namespace memledger
