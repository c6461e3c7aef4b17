#include "onnx/mapped_model.h"

#include <climits>
#include <string>

namespace memledger::onnx_io {
namespace {

using Byte = unsigned char;

bool read_varint(const Byte*& p, const Byte* end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    const Byte b = *p++;
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

void write_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

struct Field {
  uint64_t number;
  int wire;
  const Byte* begin;    // the tag
  const Byte* payload;  // a length-delimited field's bytes
  const Byte* end;
};

// Calls visit(field) for each field of the message [p, end); false on anything but the
// plain wire types (groups included) or a length past the end.
template <typename Visit>
bool for_each_field(const Byte* p, const Byte* end, Visit visit) {
  while (p < end) {
    Field f{0, 0, p, nullptr, nullptr};
    uint64_t tag = 0, value = 0;
    if (!read_varint(p, end, tag)) return false;
    f.number = tag >> 3;
    f.wire = static_cast<int>(tag & 7);
    switch (f.wire) {
      case 0:
        if (!read_varint(p, end, value)) return false;
        break;
      case 1:
        if (end - p < 8) return false;
        p += 8;
        break;
      case 5:
        if (end - p < 4) return false;
        p += 4;
        break;
      case 2:
        if (!read_varint(p, end, value) || value > static_cast<uint64_t>(end - p)) return false;
        f.payload = p;
        p += value;
        break;
      default:
        return false;
    }
    f.end = p;
    if (!visit(f)) return false;
  }
  return true;
}

void append(std::string& out, const Byte* begin, const Byte* end) {
  out.append(reinterpret_cast<const char*>(begin), static_cast<size_t>(end - begin));
}

void append_message(std::string& out, uint64_t number, const std::string& payload) {
  write_varint(out, number << 3 | 2);
  write_varint(out, payload.size());
  out += payload;
}

constexpr uint64_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;

}  // namespace

bool parse_mapped_model(std::shared_ptr<const MappedFile> file, int64_t map_from, MappedModel& out) {
  const auto all = file->bytes(0, file->size());
  const auto* base = reinterpret_cast<const Byte*>(all.data());
  const Byte* end = base + all.size();
  std::string model;
  bool graph_seen = false;
  int initializer = 0;
  const bool ok = for_each_field(base, end, [&](const Field& f) {
    if (f.number != kModelGraph || f.wire != 2) {
      append(model, f.begin, f.end);
      return true;
    }
    if (graph_seen) return false;  // a repeated message field merges: leave it to protobuf
    graph_seen = true;
    std::string graph;
    const bool graph_ok = for_each_field(f.payload, f.end, [&](const Field& g) {
      if (g.number != kGraphInitializer || g.wire != 2) {
        append(graph, g.begin, g.end);
        return true;
      }
      const int index = initializer++;
      // Cut out raw_data only when it is the tensor's one raw_data field and big.
      int raw_fields = 0;
      const Field* big = nullptr;
      Field raw{};
      if (!for_each_field(g.payload, g.end, [&](const Field& t) {
            if (t.number == kTensorRawData) {
              ++raw_fields;
              raw = t;
            }
            return true;
          }))
        return false;
      if (raw_fields == 1 && raw.wire == 2 && raw.end - raw.payload >= map_from) big = &raw;
      if (!big) {
        append(graph, g.begin, g.end);
        return true;
      }
      std::string tensor;
      append(tensor, g.payload, big->begin);
      append(tensor, big->end, g.end);
      append_message(graph, kGraphInitializer, tensor);
      out.raw_data[index] = {big->payload - base, big->end - big->payload};
      return true;
    });
    if (!graph_ok) return false;
    append_message(model, kModelGraph, graph);
    return true;
  });
  if (!ok || model.size() > static_cast<size_t>(INT_MAX) ||
      !out.model.ParseFromArray(model.data(), static_cast<int>(model.size()))) {
    out.raw_data.clear();
    return false;
  }
  out.file = std::move(file);
  return true;
}

}  // namespace memledger::onnx_io
