#include "memledger/onnx/tensor_file.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "memledger/core/checked.h"
#include "memledger/core/input_file.h"
#include "memledger/core/output_file.h"
#include "memledger/core/text.h"
#include "onnx/proto_tensor.h"

namespace memledger {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int64_t checked_elements(const Shape& shape, const std::string& what) {
  for (int64_t d : shape)
    if (d < 0) fail("{}: negative extent in {}", what, shape_to_string(shape));
  return element_count(shape, what);
}

// ---- NumPy ----

struct NpyType {
  const char* descr;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {{"<f4", DType::kFloat32}, {"<f8", DType::kFloat64}, {"<f2", DType::kFloat16},
                                 {"|i1", DType::kInt8},    {"|u1", DType::kUInt8},   {"<i2", DType::kInt16},
                                 {"<u2", DType::kUInt16},  {"<i4", DType::kInt32},   {"<i8", DType::kInt64},
                                 {"|b1", DType::kBool}};

// The header dict of a .npy file: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// with the keys in any order, either quote, and any spacing; nothing else is accepted.
struct NpyHeader {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<Shape> shape;
};

NpyHeader parse_npy_header(std::string_view h, const std::string& what) {
  size_t pos = 0;
  const auto bad = [&](std::string_view why) -> void {
    fail("{}: malformed .npy header ({} at byte {})", what, why, pos);
  };
  const auto skip = [&] {
    while (pos < h.size() && (h[pos] == ' ' || h[pos] == '\t' || h[pos] == '\n' || h[pos] == '\r')) ++pos;
  };
  const auto expect = [&](char c) {
    skip();
    if (pos >= h.size() || h[pos] != c) bad(fmt::format("expected '{}'", c));
    ++pos;
  };
  const auto string_literal = [&] {
    skip();
    if (pos >= h.size() || (h[pos] != '\'' && h[pos] != '"')) bad("expected a quoted string");
    const char quote = h[pos++];
    const size_t end = h.find(quote, pos);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string text(h.substr(pos, end - pos));
    pos = end + 1;
    return text;
  };
  // After an item: true past a ',' (another may follow), false at `close` (left for the
  // caller); anything else is malformed.
  const auto comma_or = [&](char close, std::string_view where) {
    skip();
    if (pos < h.size() && h[pos] == ',') {
      ++pos;
      return true;
    }
    if (pos >= h.size() || h[pos] != close)
      bad(fmt::format("expected ',' or '{}'{}{}", close, where.empty() ? "" : " ", where));
    return false;
  };
  NpyHeader header;
  expect('{');
  for (;;) {
    skip();
    if (pos < h.size() && h[pos] == '}') break;
    const std::string key = string_literal();
    expect(':');
    skip();
    if (key == "descr") {
      if (header.descr) bad("'descr' twice");
      header.descr = string_literal();
    } else if (key == "fortran_order") {
      if (header.fortran_order) bad("'fortran_order' twice");
      if (h.substr(pos, 4) == "True") {
        header.fortran_order = true;
        pos += 4;
      } else if (h.substr(pos, 5) == "False") {
        header.fortran_order = false;
        pos += 5;
      } else {
        bad("fortran_order is neither True nor False");
      }
    } else if (key == "shape") {
      if (header.shape) bad("'shape' twice");
      expect('(');
      Shape shape;
      for (;;) {
        skip();
        if (pos < h.size() && h[pos] == ')') break;
        const size_t start = pos;
        while (pos < h.size() && h[pos] >= '0' && h[pos] <= '9') ++pos;
        if (pos == start) bad("expected an extent");
        if (pos - start > 18) fail("{}: .npy extent too large", what);
        shape.push_back(std::stoll(std::string(h.substr(start, pos - start))));
        if (pos < h.size() && h[pos] == 'L') ++pos;
        if (!comma_or(')', "in the shape")) break;
      }
      ++pos;
      header.shape = std::move(shape);
    } else {
      bad(fmt::format("unknown key '{}'", escape_for_terminal(key)));
    }
    if (!comma_or('}', "")) break;
  }
  ++pos;
  skip();
  if (pos != h.size()) bad("text after the dict");
  if (!header.descr) fail("{}: .npy header has no 'descr'", what);
  if (!header.fortran_order) fail("{}: .npy header has no 'fortran_order'", what);
  if (!header.shape) fail("{}: .npy header has no 'shape'", what);
  return header;
}

}  // namespace

bool is_tensor_proto_path(const std::string& path) {
  if (ends_with(path, ".pb")) return true;
  if (ends_with(path, ".npy")) return false;
  fail("{}: unknown tensor file type (expected .pb or .npy)", path);
}

NamedTensor parse_npy(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) fail("{}: not a .npy file", what);
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail("{}: truncated .npy header", what);
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    fail("{}: .npy version {} is not supported", what, major);
  }
  if (bytes.size() < offset + header_len) fail("{}: truncated .npy header", what);
  const NpyHeader header = parse_npy_header(std::string_view(bytes).substr(offset, header_len), what);
  offset += header_len;
  std::string descr = *header.descr;
  if (descr == "<b1" || descr == "=b1") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  std::optional<DType> dtype;
  for (const NpyType& t : kNpyTypes)
    if (descr == t.descr) dtype = t.dtype;
  if (!dtype) fail("{}: .npy dtype '{}' is not supported", what, escape_for_terminal(descr));
  if (*header.fortran_order) fail("{}: Fortran-order .npy is not supported", what);
  const Shape& shape = *header.shape;
  const int64_t elements = checked_elements(shape, what);
  const int64_t need = checked_mul(elements, int64_t{host_element_bytes(*dtype)}, what);
  if (static_cast<int64_t>(bytes.size() - offset) != need)
    fail("{}: .npy data has {} bytes, shape {} needs {}", what, bytes.size() - offset, shape_to_string(shape), need);
  NamedTensor result{.name = "", .tensor = Tensor(*dtype, shape)};
  if (need > 0) std::memcpy(result.tensor.bytes().data(), bytes.data() + offset, static_cast<size_t>(need));
  return result;
}

std::string serialize_npy(const Tensor& tensor) {
  const char* descr = nullptr;
  for (const NpyType& t : kNpyTypes)
    if (t.dtype == tensor.dtype()) descr = t.descr;
  if (!descr) fail("cannot write a {} tensor as .npy", dtype_name(tensor.dtype()));
  std::string shape = "(";
  for (int64_t d : tensor.shape()) shape += std::to_string(d) + (tensor.shape().size() == 1 ? "," : ", ");
  if (tensor.shape().size() > 1) shape.resize(shape.size() - 2);
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  const size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(tensor.bytes().data()), tensor.bytes().size());
  return out;
}

// ---- TensorProto ----

NamedTensor parse_tensor_proto(const std::string& bytes, const std::string& what) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) fail("{}: not a valid TensorProto", what);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) fail("{}: external data is not supported", what);
  return {.name = proto.name(), .tensor = onnx_io::tensor_from_proto(proto, what)};
}

std::string serialize_tensor_proto(const Tensor& tensor, const std::string& name) {
  return onnx_io::tensor_to_proto(tensor, name).SerializeAsString();
}

NamedTensor read_tensor_file(const std::string& path, int64_t max_bytes) {
  const bool pb = is_tensor_proto_path(path);
  const std::string bytes = read_input_file(path, max_bytes, "tensor file");
  return pb ? parse_tensor_proto(bytes, path) : parse_npy(bytes, path);
}

void write_tensor_file(const std::string& path, const Tensor& tensor, const std::string& name) {
  write_output_file(path, is_tensor_proto_path(path) ? serialize_tensor_proto(tensor, name) : serialize_npy(tensor));
}

}  // namespace memledger
