// The .tflite reader: verify, check what the Verifier cannot, then build the graph.
#include "memledger/tflite/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/ir/axis_roles.h"
#include "memledger/ir/op_table.h"
#include "memledger/ir/quantization_check.h"
#include "memledger/ir/verifier.h"
#include "tflite/schema_generated.h"

namespace memledger {
namespace {

namespace fb = tflite::fb;

constexpr int kMaxRank = 8;
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;
// A variable without data starts as zeros that the file does not hold: memledger creates that
// state, so its size read out of the file is bounded (TFLM's variables are kilobytes).
constexpr int64_t kMaxZeroStateBytes = int64_t{64} << 20;
constexpr int32_t kCustomCode = 32;

// ---- the Verifier, and where it fails ----

// Names the first part of the model that does not verify, walking down from the root
// (each part is verified before its fields are read).
std::string first_unverified(const uint8_t* data, size_t size) {
  auto verifier = [&] { return flatbuffers::Verifier(data, size, 64, 1000000); };
  const auto* root_offset = reinterpret_cast<const flatbuffers::uoffset_t*>(data);
  if (flatbuffers::ReadScalar<flatbuffers::uoffset_t>(root_offset) >= size) return "the root offset";
  const fb::Model* model = fb::GetModel(data);
  {
    auto v = verifier();
    if (!v.VerifyTableStart(reinterpret_cast<const uint8_t*>(model))) return "the model table";
  }
  // A field's offset is read from inside its table: verified before the field is.
  const auto offset_ok = [&](const auto* owner, flatbuffers::voffset_t field) {
    auto v = verifier();
    return reinterpret_cast<const flatbuffers::Table*>(owner)->VerifyOffset(v, field);
  };
  // The model's own fields, one vector at a time.
  const auto check_tables = [&](const auto* vec, std::string_view field, auto verify_one) -> std::string {
    auto v = verifier();
    if (!v.VerifyVector(vec)) return std::string(field);
    if (!vec) return {};
    for (flatbuffers::uoffset_t i = 0; i < vec->size(); ++i) {
      auto e = verifier();
      if (!verify_one(e, vec->Get(i))) return fmt::format("{}[{}]", field, i);
    }
    return {};
  };
  const auto table = [](flatbuffers::Verifier& v, const auto* t) { return t->Verify(v); };
  if (!offset_ok(model, fb::Model::VT_OPERATOR_CODES)) return "operator_codes";
  if (auto f = check_tables(model->operator_codes(), "operator_codes", table); !f.empty()) return f;
  if (!offset_ok(model, fb::Model::VT_BUFFERS)) return "buffers";
  if (auto f = check_tables(model->buffers(), "buffers", table); !f.empty()) return f;
  if (!offset_ok(model, fb::Model::VT_METADATA)) return "metadata";
  if (auto f = check_tables(model->metadata(), "metadata", table); !f.empty()) return f;
  auto subgraph_fields = [&](flatbuffers::Verifier& v, const fb::SubGraph* sg) -> bool {
    return v.VerifyTableStart(reinterpret_cast<const uint8_t*>(sg));
  };
  if (!offset_ok(model, fb::Model::VT_SUBGRAPHS)) return "subgraphs";
  if (auto f = check_tables(model->subgraphs(), "subgraphs", subgraph_fields); !f.empty()) return f;
  if (model->subgraphs()) {
    for (flatbuffers::uoffset_t s = 0; s < model->subgraphs()->size(); ++s) {
      const fb::SubGraph* sg = model->subgraphs()->Get(s);
      const std::string at = fmt::format("subgraphs[{}].", s);
      if (!offset_ok(sg, fb::SubGraph::VT_TENSORS)) return at + "tensors";
      if (auto f = check_tables(sg->tensors(), at + "tensors", table); !f.empty()) return f;
      if (!offset_ok(sg, fb::SubGraph::VT_OPERATORS)) return at + "operators";
      if (auto f = check_tables(sg->operators(), at + "operators", table); !f.empty()) return f;
      auto v = verifier();
      if (!offset_ok(sg, fb::SubGraph::VT_INPUTS) || !v.VerifyVector(sg->inputs())) return at + "inputs";
      if (!offset_ok(sg, fb::SubGraph::VT_OUTPUTS) || !v.VerifyVector(sg->outputs())) return at + "outputs";
      if (!offset_ok(sg, fb::SubGraph::VT_NAME) || !v.VerifyString(sg->name())) return at + "name";
    }
  }
  {
    auto v = verifier();
    if (!offset_ok(model, fb::Model::VT_DESCRIPTION) || !v.VerifyString(model->description())) return "description";
    if (!offset_ok(model, fb::Model::VT_METADATA_BUFFER) || !v.VerifyVector(model->metadata_buffer()))
      return "metadata_buffer";
  }
  return "a field (offsets or vector lengths point outside the file)";
}

// ---- types ----

std::optional<DType> dtype_of(fb::TensorType t) {
  switch (t) {
    case fb::TensorType::FLOAT32:
      return DType::kFloat32;
    case fb::TensorType::INT32:
      return DType::kInt32;
    case fb::TensorType::UINT8:
      return DType::kUInt8;
    case fb::TensorType::INT64:
      return DType::kInt64;
    case fb::TensorType::INT16:
      return DType::kInt16;
    case fb::TensorType::INT8:
      return DType::kInt8;
    case fb::TensorType::BOOL:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

// ---- options: the builtin options' fields, the schema's defaults where absent ----

std::string activation(fb::ActivationFunctionType a, const std::string& where) {
  const char* name = fb::EnumNameActivationFunctionType(a);
  if (!name || !*name)
    fail("{}: fused_activation_function {} is not an ActivationFunctionType", where, static_cast<int>(a));
  return name;
}

std::string padding(fb::Padding p, const std::string& where) {
  if (p != fb::Padding::SAME && p != fb::Padding::VALID)
    fail("{}: padding {} is neither SAME nor VALID", where, static_cast<int>(p));
  return fb::EnumNamePadding(p);
}

std::vector<int64_t> ints_of(const flatbuffers::Vector<int32_t>* v) {
  std::vector<int64_t> out;
  if (v)
    for (int32_t x : *v) out.push_back(x);
  return out;
}

// Fills `node.attributes` for the builtin `op` from `o`'s options (defaults when absent);
// an options table of another type than the operator's is an Error.
void read_options(const fb::Operator* o, const std::string& op, Node& node, const std::string& where) {
  Attributes& a = node.attributes;
  const auto type = o->builtin_options_type();
  const auto expect = [&](fb::BuiltinOptions wanted) {
    if (type != fb::BuiltinOptions::NONE && type != wanted)
      fail("{}: builtin_options are {} (type {}), not {}'s", where, fb::EnumNameBuiltinOptions(type),
           static_cast<int>(type), op);
  };
  const auto flag = [](bool b) { return int64_t{b ? 1 : 0}; };
  if (op == "CONV_2D") {
    expect(fb::BuiltinOptions::Conv2DOptions);
    const auto* p = o->builtin_options_as_Conv2DOptions();
    a["padding"] = padding(p ? p->padding() : fb::Padding::SAME, where);
    a["stride_w"] = int64_t{p ? p->stride_w() : 0};
    a["stride_h"] = int64_t{p ? p->stride_h() : 0};
    a["fused_activation_function"] =
        activation(p ? p->fused_activation_function() : fb::ActivationFunctionType::NONE, where);
    a["dilation_w_factor"] = int64_t{p ? p->dilation_w_factor() : 1};
    a["dilation_h_factor"] = int64_t{p ? p->dilation_h_factor() : 1};
  } else if (op == "DEPTHWISE_CONV_2D") {
    expect(fb::BuiltinOptions::DepthwiseConv2DOptions);
    const auto* p = o->builtin_options_as_DepthwiseConv2DOptions();
    a["padding"] = padding(p ? p->padding() : fb::Padding::SAME, where);
    a["stride_w"] = int64_t{p ? p->stride_w() : 0};
    a["stride_h"] = int64_t{p ? p->stride_h() : 0};
    a["depth_multiplier"] = int64_t{p ? p->depth_multiplier() : 0};
    a["fused_activation_function"] =
        activation(p ? p->fused_activation_function() : fb::ActivationFunctionType::NONE, where);
    a["dilation_w_factor"] = int64_t{p ? p->dilation_w_factor() : 1};
    a["dilation_h_factor"] = int64_t{p ? p->dilation_h_factor() : 1};
  } else if (op == "AVERAGE_POOL_2D" || op == "MAX_POOL_2D") {
    expect(fb::BuiltinOptions::Pool2DOptions);
    const auto* p = o->builtin_options_as_Pool2DOptions();
    a["padding"] = padding(p ? p->padding() : fb::Padding::SAME, where);
    a["stride_w"] = int64_t{p ? p->stride_w() : 0};
    a["stride_h"] = int64_t{p ? p->stride_h() : 0};
    a["filter_width"] = int64_t{p ? p->filter_width() : 0};
    a["filter_height"] = int64_t{p ? p->filter_height() : 0};
    a["fused_activation_function"] =
        activation(p ? p->fused_activation_function() : fb::ActivationFunctionType::NONE, where);
  } else if (op == "FULLY_CONNECTED") {
    expect(fb::BuiltinOptions::FullyConnectedOptions);
    const auto* p = o->builtin_options_as_FullyConnectedOptions();
    a["fused_activation_function"] =
        activation(p ? p->fused_activation_function() : fb::ActivationFunctionType::NONE, where);
    const auto format = p ? p->weights_format() : fb::FullyConnectedOptionsWeightsFormat::DEFAULT;
    const char* name = fb::EnumNameFullyConnectedOptionsWeightsFormat(format);
    if (!name || !*name) fail("{}: weights_format {} is not known", where, static_cast<int>(format));
    a["weights_format"] = std::string(name);
    a["keep_num_dims"] = flag(p && p->keep_num_dims());
    a["asymmetric_quantize_inputs"] = flag(p && p->asymmetric_quantize_inputs());
  } else if (op == "ADD" || op == "MUL" || op == "SUB") {
    fb::ActivationFunctionType f = fb::ActivationFunctionType::NONE;
    if (op == "ADD") {
      expect(fb::BuiltinOptions::AddOptions);
      if (const auto* p = o->builtin_options_as_AddOptions()) f = p->fused_activation_function();
    } else if (op == "MUL") {
      expect(fb::BuiltinOptions::MulOptions);
      if (const auto* p = o->builtin_options_as_MulOptions()) f = p->fused_activation_function();
    } else {
      expect(fb::BuiltinOptions::SubOptions);
      if (const auto* p = o->builtin_options_as_SubOptions()) f = p->fused_activation_function();
    }
    a["fused_activation_function"] = activation(f, where);
  } else if (op == "CONCATENATION") {
    expect(fb::BuiltinOptions::ConcatenationOptions);
    const auto* p = o->builtin_options_as_ConcatenationOptions();
    a["axis"] = int64_t{p ? p->axis() : 0};
    a["fused_activation_function"] =
        activation(p ? p->fused_activation_function() : fb::ActivationFunctionType::NONE, where);
  } else if (op == "SOFTMAX") {
    expect(fb::BuiltinOptions::SoftmaxOptions);
    const auto* p = o->builtin_options_as_SoftmaxOptions();
    a["beta"] = p ? p->beta() : 0.0f;
  } else if (op == "MEAN") {
    expect(fb::BuiltinOptions::ReducerOptions);
    const auto* p = o->builtin_options_as_ReducerOptions();
    a["keep_dims"] = flag(p && p->keep_dims());
  } else if (op == "SQUEEZE") {
    expect(fb::BuiltinOptions::SqueezeOptions);
    const auto* p = o->builtin_options_as_SqueezeOptions();
    a["squeeze_dims"] = ints_of(p ? p->squeeze_dims() : nullptr);
  } else if (op == "RESHAPE") {
    expect(fb::BuiltinOptions::ReshapeOptions);
    const auto* p = o->builtin_options_as_ReshapeOptions();
    if (p && p->new_shape()) {
      if (p->new_shape()->size() > kMaxRank) fail("{}: new_shape has {} extents", where, p->new_shape()->size());
      a["new_shape"] = ints_of(p->new_shape());
    }
  } else if (op == "STRIDED_SLICE") {
    expect(fb::BuiltinOptions::StridedSliceOptions);
    const auto* p = o->builtin_options_as_StridedSliceOptions();
    a["begin_mask"] = int64_t{p ? p->begin_mask() : 0};
    a["end_mask"] = int64_t{p ? p->end_mask() : 0};
    a["ellipsis_mask"] = int64_t{p ? p->ellipsis_mask() : 0};
    a["new_axis_mask"] = int64_t{p ? p->new_axis_mask() : 0};
    a["shrink_axis_mask"] = int64_t{p ? p->shrink_axis_mask() : 0};
    a["offset"] = flag(p && p->offset());
  } else if (op == "RESIZE_NEAREST_NEIGHBOR") {
    expect(fb::BuiltinOptions::ResizeNearestNeighborOptions);
    const auto* p = o->builtin_options_as_ResizeNearestNeighborOptions();
    a["align_corners"] = flag(p && p->align_corners());
    a["half_pixel_centers"] = flag(p && p->half_pixel_centers());
  } else if (op == "SVDF") {
    expect(fb::BuiltinOptions::SVDFOptions);
    const auto* p = o->builtin_options_as_SVDFOptions();
    a["rank"] = int64_t{p ? p->rank() : 0};
    a["fused_activation_function"] =
        activation(p ? p->fused_activation_function() : fb::ActivationFunctionType::NONE, where);
    a["asymmetric_quantize_inputs"] = flag(p && p->asymmetric_quantize_inputs());
  }
}

// ---- the reader ----

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, std::string source) : bytes_(bytes), source_(std::move(source)) {}

  TfliteModel read() {
    check_envelope();
    model_ = fb::GetModel(bytes_.data());
    if (model_->version() != 3) error("version {} (memledger reads schema version 3)", model_->version());
    const auto* subgraphs = model_->subgraphs();
    if (!subgraphs || subgraphs->size() == 0) error("subgraphs: the model has none");
    buffers_ = model_->buffers();
    codes_ = model_->operator_codes();
    subgraph_ = subgraphs->Get(0);
    read_tensors();
    read_operators();
    read_io();
    infer_axis_roles(out_.graph);
    verify_graph(out_.graph);
    return std::move(out_);
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> format, Args&&... args) const {
    throw Error(source_ + ": " + fmt::format(format, std::forward<Args>(args)...));
  }

  void check_envelope() {
    if (bytes_.size() < 8) error("{} bytes, too short for a TFLite model", bytes_.size());
    if (!has_tflite_identifier(bytes_)) {
      std::string id;
      for (size_t i = 4; i < 8; ++i) {
        const auto c = static_cast<char>(bytes_[i]);
        id += (c >= 32 && c < 127) ? c : '?';
      }
      error("file identifier '{}' is not TFLite's 'TFL3'", id);
    }
    if (bytes_.size() >= (size_t{1} << 31)) error("{} bytes, more than a flatbuffer may hold", bytes_.size());
    flatbuffers::Verifier verifier(bytes_.data(), bytes_.size(), 64, 1000000);
    if (!fb::VerifyModelBuffer(verifier))
      error("{} does not verify (an offset or a length points outside the file, or a table is malformed)",
            first_unverified(bytes_.data(), bytes_.size()));
  }

  std::string tensor_where(size_t i) const { return fmt::format("subgraphs[0].tensors[{}]", i); }

  // Every tensor becomes a value (inputs, constants, variables, node outputs), in index order.
  void read_tensors() {
    const auto* tensors = subgraph_->tensors();
    if (!tensors || tensors->size() == 0) error("subgraphs[0].tensors: none");
    const size_t count = tensors->size();
    std::vector<char> is_input(count, 0);
    if (const auto* inputs = subgraph_->inputs())
      for (int32_t i : *inputs) {
        if (i < 0 || static_cast<size_t>(i) >= count)
          error("subgraphs[0].inputs: tensor {} is out of range ({} tensors)", i, count);
        is_input[static_cast<size_t>(i)] = 1;
      }
    Graph& g = out_.graph;
    g.requantization = Requantization::kFixedPoint;
    if (subgraph_->name() && subgraph_->name()->size() > 0) g.name = subgraph_->name()->str();
    std::vector<std::string> names(count);
    for (size_t i = 0; i < count; ++i) {
      const fb::Tensor* t = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string name = t->name() ? t->name()->str() : "";
      if (name.empty()) name = fmt::format("tensor_{}", i);
      names[i] = g.unique_name(name);
      // unique_name only knows values already added: reserve this one now.
      Value v;
      v.name = names[i];
      const std::string where = tensor_where(i) + " '" + v.name + "'";
      const auto dtype = dtype_of(t->type());
      if (!dtype) error("{}: type {} is not one memledger reads", where, fb::EnumNameTensorType(t->type()));
      v.dtype = *dtype;
      if (t->shape()) {
        if (t->shape()->size() > kMaxRank) error("{}: rank {} is above {}", where, t->shape()->size(), kMaxRank);
        for (int32_t d : *t->shape()) {
          if (d < 0) error("{}: shape has extent {} (dynamic shapes are not read)", where, d);
          v.shape.push_back(d);
        }
      }
      int64_t elements = 1;
      for (int64_t d : v.shape) elements = checked_mul(elements, d, where + " shape");
      const int64_t bytes = checked_mul(elements, (dtype_bits(v.dtype) + 7) / 8, where + " bytes");
      if (bytes > kMaxTensorBytes) error("{}: {} bytes is more than memledger plans", where, bytes);
      v.roles = unknown_roles(v.shape.size());
      v.quant = quantization(t, v, where);

      // Its buffer: constant data, or none.
      const uint32_t b = t->buffer();
      if (!buffers_ || b >= buffers_->size())
        error("{}: buffer {} is out of range ({} buffers)", where, b, buffers_ ? buffers_->size() : 0);
      const fb::Buffer* buffer = buffers_->Get(b);
      if (buffer->offset() > 1 || buffer->size() > 0)
        error("buffers[{}]: data stored outside the flatbuffer (offset/size) is not read", b);
      const auto* data = buffer->data();
      const size_t have = data ? data->size() : 0;
      ValueId id;
      if (t->is_variable()) {
        if (is_input[i]) error("{}: a variable is also a graph input", where);
        if (have != 0 && static_cast<int64_t>(have) != bytes)
          error("{}: buffer {} has {} bytes, the variable needs {}", where, b, have, bytes);
        if (have == 0) {
          zero_state_bytes_ += bytes;
          if (zero_state_bytes_ > kMaxZeroStateBytes)
            error(
                "{}: a variable of {} bytes with no data in its buffer; memledger creates at most {} bytes of "
                "zero state in all",
                where, bytes, kMaxZeroStateBytes);
        }
        Tensor initial(v.dtype, v.shape);  // zeros: TFLite's initial state
        if (have != 0) std::memcpy(initial.bytes().data(), data->data(), have);
        v.constant = SharedTensor(std::move(initial));
        id = g.add_value(std::move(v));
        variables_.insert(id);
      } else if (have != 0) {
        if (is_input[i]) error("{}: a graph input with constant data (buffer {})", where, b);
        if (static_cast<int64_t>(have) != bytes)
          error("{}: buffer {} has {} bytes, the tensor {}{} needs {}", where, b, have, dtype_name(v.dtype),
                shape_to_string(v.shape), bytes);
        Tensor values(v.dtype, v.shape);
        std::memcpy(values.bytes().data(), data->data(), have);
        v.constant = SharedTensor(std::move(values));
        id = g.add_value(std::move(v));
      } else if (is_input[i]) {
        id = g.add_input(std::move(v));
      } else {
        id = g.add_value(std::move(v));
      }
      out_.tensor_values.push_back(id);
    }
    // Graph inputs in the file's order (add_input above followed tensor order).
    std::vector<ValueId> order;
    if (const auto* inputs = subgraph_->inputs())
      for (int32_t i : *inputs) order.push_back(out_.tensor_values[static_cast<size_t>(i)]);
    if (order != g.inputs()) {
      // The file lists its inputs in another order than their tensor indices.
      input_order_ = order;
    }
  }

  std::optional<Quantization> quantization(const fb::Tensor* t, const Value& v, const std::string& where) const {
    const fb::QuantizationParameters* q = t->quantization();
    if (!q || !q->scale() || q->scale()->size() == 0) return std::nullopt;
    Quantization out;
    const size_t n = q->scale()->size();
    for (float s : *q->scale()) {
      if (!(s >= 0) || s > 3.0e38f) error("{}: quantization scale {} is not a finite non-negative number", where, s);
      out.scales.push_back(s);
    }
    // A float tensor may carry parameters (a DEQUANTIZE's output): its zero points are not bounded.
    const IntegerRange range =
        dtype_is_float(v.dtype) ? IntegerRange{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}
                                : integer_range(v.dtype, where);
    const int64_t lo = range.min, hi = range.max;
    if (q->zero_point() && q->zero_point()->size() != 0) {
      if (q->zero_point()->size() != n) error("{}: {} zero points for {} scales", where, q->zero_point()->size(), n);
      // Copied out byte by byte: the Verifier checks a vector's length prefix for 4-byte
      // alignment, not its elements, so a hostile file may place these int64s off 8 bytes.
      const uint8_t* raw = q->zero_point()->Data();
      for (size_t i = 0; i < n; ++i) {
        int64_t z = 0;
        std::memcpy(&z, raw + i * sizeof(int64_t), sizeof(int64_t));  // little-endian, as flatbuffers
        if (z < lo || z > hi) error("{}: zero point {} is outside {}", where, z, dtype_name(v.dtype));
        out.zero_points.push_back(z);
      }
    } else {
      out.zero_points.assign(n, 0);
    }
    if (n > 1) {
      int32_t axis = q->quantized_dimension();
      // A depthwise bias [O] written with its filter's quantized_dimension (3), as TFLite's
      // converter does (person_detect): its one axis is the one the scales run along.
      if (v.shape.size() == 1 && v.shape[0] == static_cast<int64_t>(n) && axis >= 1) axis = 0;
      if (axis < 0 || static_cast<size_t>(axis) >= v.shape.size())
        error("{}: quantized_dimension {} is outside rank {}", where, axis, v.shape.size());
      if (v.shape[static_cast<size_t>(axis)] != static_cast<int64_t>(n))
        error("{}: {} scales along quantized_dimension {} of extent {}", where, n, axis,
              v.shape[static_cast<size_t>(axis)]);
      out.axis = axis;
    }
    return out;
  }

  ValueId tensor(int32_t index, const std::string& where, std::string_view field) const {
    if (index < 0 || static_cast<size_t>(index) >= out_.tensor_values.size())
      error("{}: {} names tensor {}, out of range ({} tensors)", where, field, index, out_.tensor_values.size());
    return out_.tensor_values[static_cast<size_t>(index)];
  }

  void read_operators() {
    Graph& g = out_.graph;
    const auto* ops = subgraph_->operators();
    if (!ops) return;
    std::vector<char> defined(g.value_count(), 0);
    for (size_t i = 0; i < g.value_count(); ++i) {
      const Value& v = g.value(ValueId{static_cast<int32_t>(i)});
      if (v.is_constant()) defined[i] = 1;
    }
    for (ValueId in : g.inputs()) defined[static_cast<size_t>(in.index)] = 1;
    for (flatbuffers::uoffset_t k = 0; k < ops->size(); ++k) {
      const fb::Operator* o = ops->Get(k);
      const std::string where = fmt::format("subgraphs[0].operators[{}]", k);
      if (!codes_ || o->opcode_index() >= codes_->size())
        error("{}: opcode_index {} is out of range ({} operator codes)", where, o->opcode_index(),
              codes_ ? codes_->size() : 0);
      const fb::OperatorCode* code = codes_->Get(o->opcode_index());
      const int32_t builtin = std::max<int32_t>(code->builtin_code(), code->deprecated_builtin_code());
      Node node;
      if (builtin == kCustomCode) {
        const std::string custom = code->custom_code() ? code->custom_code()->str() : "";
        if (custom.empty() || custom.size() > 128 ||
            !std::all_of(custom.begin(), custom.end(), [](char c) { return c > 32 && c < 127; }))
          error("{}: operator_codes[{}].custom_code is empty or not a printable name", where, o->opcode_index());
        node.domain = std::string(kTfliteCustomDomain);
        node.op = custom;
      } else {
        node.domain = std::string(kTfliteDomain);
        node.op = tflite_builtin_name(builtin);
        if (!find_op(kTfliteDomain, node.op))
          error("{}: operator {} is not one memledger reads (no op record for tflite {})", where, node.op, node.op);
      }
      node.name = fmt::format("{}_{}", node.op, k);
      const std::string label = fmt::format("{} {} '{}'", where, node.op, node.name);
      read_options(o, node.op, node, label);
      if (!o->outputs() || o->outputs()->size() == 0) error("{}: outputs: none", label);
      if (o->inputs() && o->inputs()->size() > 1024) error("{}: {} inputs", label, o->inputs()->size());
      if (o->outputs()->size() > 1024) error("{}: {} outputs", label, o->outputs()->size());
      if (o->inputs())
        for (int32_t in : *o->inputs()) {
          if (in == -1) {
            node.inputs.push_back(ValueId{});
            continue;
          }
          const ValueId id = tensor(in, label, "inputs");
          if (!defined[static_cast<size_t>(id.index)])
            error(
                "{}: input tensor {} '{}' is read before an operator writes it (operators out of order, a cycle, "
                "or a zero-size buffer for a non-empty tensor)",
                label, in, g.value(id).name);
          node.inputs.push_back(id);
        }
      for (int32_t out : *o->outputs()) {
        const ValueId id = tensor(out, label, "outputs");
        const Value& v = g.value(id);
        if (defined[static_cast<size_t>(id.index)])
          error("{}: output tensor {} '{}' is {}", label, out, v.name,
                v.is_constant() ? "a constant" : (g.is_graph_input(id) ? "a graph input" : "written twice"));
        defined[static_cast<size_t>(id.index)] = 1;
        node.outputs.push_back(id);
      }
      add_state_output(node, label);
      check_shapes(node, label);
      g.add_node(std::move(node));
    }
  }

  // SVDF's new state: a second output written over the state input (tflite-contract.md).
  void add_state_output(Node& node, const std::string& label) {
    const OpRecord* r = find_op(node.domain, node.op);
    if (!r || r->state_input < 0) return;
    const auto si = static_cast<size_t>(r->state_input);
    if (si >= node.inputs.size() || !node.inputs[si].valid()) error("{}: the state input {} is missing", label, si);
    const Value& state = out_.graph.value(node.inputs[si]);
    if (!variables_.count(node.inputs[si]))
      error("{}: input {} '{}' is not a variable tensor (is_variable)", label, si, state.name);
    if (node.outputs.size() > static_cast<size_t>(r->state_output)) return;
    Value next;
    next.name = out_.graph.unique_name(state.name + ".next");
    next.dtype = state.dtype;
    next.shape = state.shape;
    next.roles = state.roles;
    next.quant = state.quant;
    node.outputs.push_back(out_.graph.add_value(std::move(next)));
  }

  // The file's shapes against the op record's rule, where there is one.
  void check_shapes(const Node& node, const std::string& label) const {
    const OpRecord* r = find_op(node.domain, node.op);
    if (!r || !r->shape) return;
    const Graph& g = out_.graph;
    ShapeInputs in{.node = node, .label = label};
    in.outputs = node.outputs.size();
    for (ValueId id : node.inputs) {
      if (!id.valid()) {
        in.types.emplace_back();
        in.values.push_back(nullptr);
        in.names.emplace_back();
        continue;
      }
      const Value& v = g.value(id);
      in.types.push_back(TensorType{v.dtype, v.shape});
      in.values.push_back(v.is_constant() && !variables_.count(id) ? &*v.constant : nullptr);
      in.names.push_back(v.name);
    }
    std::vector<TensorType> types;
    try {
      types = r->shape(in);
    } catch (const NotStatic&) {
      return;
    } catch (const Error& e) {
      throw Error(source_ + ": " + e.what());
    }
    for (size_t i = 0; i < std::min(types.size(), node.outputs.size()); ++i) {
      const Value& v = g.value(node.outputs[i]);
      if (types[i].shape != v.shape)
        error("{}: output '{}' is {} in the file, but {} gives {}", label, v.name, shape_to_string(v.shape), node.op,
              shape_to_string(types[i].shape));
    }
  }

  void read_io() {
    Graph& g = out_.graph;
    if (!input_order_.empty()) {
      // Graph keeps inputs in the order they were added: rebuild only when the file differs.
      error("subgraphs[0].inputs: listed in another order than their tensor indices (not read)");
    }
    const auto* outputs = subgraph_->outputs();
    if (!outputs || outputs->size() == 0) error("subgraphs[0].outputs: none");
    for (int32_t o : *outputs) {
      const ValueId id = tensor(o, "subgraphs[0]", "outputs");
      const Value& v = g.value(id);
      if (!v.producer.valid() && !v.is_constant() && !g.is_graph_input(id))
        error("subgraphs[0].outputs: tensor {} '{}' is written by no operator", o, v.name);
      g.mark_output(id);
    }
    // 4-D activations are NHWC (TFLite's layout): N, H, W, C.
    for (size_t i = 0; i < g.value_count(); ++i) {
      Value& v = g.value(ValueId{static_cast<int32_t>(i)});
      if (v.shape.size() == 4 && !v.is_constant()) v.roles = {AxisRole::kN, AxisRole::kH, AxisRole::kW, AxisRole::kC};
    }
  }

  std::span<const uint8_t> bytes_;
  std::string source_;
  const fb::Model* model_ = nullptr;
  const fb::SubGraph* subgraph_ = nullptr;
  const flatbuffers::Vector<flatbuffers::Offset<fb::Buffer>>* buffers_ = nullptr;
  const flatbuffers::Vector<flatbuffers::Offset<fb::OperatorCode>>* codes_ = nullptr;
  std::vector<ValueId> input_order_;
  std::set<ValueId> variables_;   // is_variable tensors: constants of their initial state
  int64_t zero_state_bytes_ = 0;  // the variables without data, created as zeros
  TfliteModel out_;
};

}  // namespace

bool has_tflite_identifier(std::span<const uint8_t> bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data() + 4, "TFL3", 4) == 0;
}

TfliteModel import_tflite_bytes(std::span<const uint8_t> bytes, const std::string& source,
                                const TfliteImportOptions& options) {
  if (static_cast<int64_t>(bytes.size()) > options.max_bytes)
    fail("{}: {} bytes, more than the {} a model may have", source, bytes.size(), options.max_bytes);
  return Reader(bytes, source).read();
}

TfliteModel import_tflite_file(const std::string& path, const TfliteImportOptions& options) {
  const std::string content = read_input_file(path, options.max_bytes, "TFLite model");
  // Flatbuffers read scalars in place: the bytes must be aligned as the file was (16).
  std::vector<uint64_t> aligned((content.size() + 7) / 8);
  std::memcpy(aligned.data(), content.data(), content.size());
  return import_tflite_bytes({reinterpret_cast<const uint8_t*>(aligned.data()), content.size()}, path, options);
}

}  // namespace memledger
