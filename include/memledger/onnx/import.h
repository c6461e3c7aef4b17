// Reads an ONNX model into the graph IR (DESIGN.md §2). libonnx's checker runs first; then
// node by node, in topological order, the op table's shape rules give every output's type
// (libonnx's inference only for operators the table has no rule for), value rules turn
// shape computations on constants into constants, every value must have a static shape,
// and axis roles are stated from operator semantics (ir/axis_roles.h). Everything the file claims is
// checked against the bytes actually present before anything is allocated from it.
// Quantized models come out with integer operators over quantized values (onnx/fold_qdq).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/core/shape.h"
#include "memledger/ir/graph.h"

namespace memledger {

// The default-domain opsets the importer accepts.
inline constexpr int64_t kMinOnnxOpset = 7;
inline constexpr int64_t kMaxOnnxOpset = 17;

struct ImportOptions {
  // Static shapes for graph inputs, by name (`--input-shape NAME=1x3x224x224`); they
  // replace the declared shape, which must agree on rank and on every static extent.
  std::map<std::string, Shape> input_shapes;
  // `--input-layout NHWC`: 4-D graph inputs are N,H,W,C (models from NHWC sources).
  bool input_layout_nhwc = false;
  // Bound on a model file (protobuf's own limit).
  int64_t max_bytes = int64_t{2} << 30;
  // Bound on all of a model's external data together: models over 2 GiB keep their
  // weights there (torchvision's vit_h_14: 2.35 GiB).
  int64_t max_external_bytes = int64_t{64} << 30;
  // Model files of at least this many bytes are mapped, not read; in them and in external
  // data files, tensors of at least map_tensors_from bytes are viewed in place (when held
  // in the host layout, aligned to their element size), never copied onto the heap.
  // Smaller ones, shape constants among them, are read as before.
  int64_t map_files_from = int64_t{16} << 20;
  int64_t map_tensors_from = int64_t{64} << 10;
  // Read QLinear operators and fold DequantizeLinear → op → QuantizeLinear into integer
  // operators (DESIGN.md §11). `--keep-qdq` turns it off: the model as written, with the
  // float output of every DequantizeLinear as a value (to see what folding saves).
  bool fold_quantized = true;
};

// Imports a model file. External data files must lie inside the model's folder. Every
// failure is an Error whose message starts with the file's path.
Graph import_onnx_file(const std::string& path, const ImportOptions& options = {});

// Imports a serialized ModelProto. `source` names it in messages; `model_dir` is where
// external data files are looked up (empty: external data is refused).
Graph import_onnx_bytes(std::string_view bytes, const ImportOptions& options = {},
                        const std::string& source = "<memory>", const std::string& model_dir = "");

// Parses `NAME=1x3x224x224` (extents > 0) into options.input_shapes; an Error naming the
// text when it is malformed or names an input twice.
void add_input_shape(ImportOptions& options, const std::string& text);

// The op table's shapes against libonnx's inference, value by value: the model is
// imported, the nodes the import made constants become Constant nodes, libonnx's strict
// shape inference runs over the whole result, and every node output for which libonnx
// states a static type is compared with the imported graph's. For tests and benches; a
// model the importer refuses is an Error as for import_onnx_file.
struct ShapeCrossCheck {
  int compared = 0;                        // node outputs with a static type from both
  int libonnx_unknown = 0;                 // node outputs libonnx gives no static type
  std::vector<std::string> disagreements;  // "value 'y' of Conv 'c': table float32[1,2], libonnx float32[1,3]"
  std::string libonnx_error;               // libonnx's inference refused the model (nothing compared)
};
ShapeCrossCheck cross_check_shapes(const std::string& path, const ImportOptions& options = {});

// True when ONNX defines `node`'s operator at `opset` (default domain) or it is one of
// memledger's own operators. Anything else imports but cannot run (custom domains).
bool is_known_operator(const Node& node, int64_t opset);

}  // namespace memledger
