#include "memledger/onnx/import.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <queue>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/core/mapped_file.h"
#include "memledger/core/text.h"
#include "memledger/ir/affine.h"
#include "memledger/ir/axis_roles.h"
#include "memledger/ir/op_table.h"
#include "memledger/ir/verifier.h"
#include "onnx/check_names.h"
#include "onnx/dimension_denotation.h"
#include "onnx/external_data_reader.h"
#include "onnx/fold_qdq.h"
#include "onnx/mapped_model.h"
#include "onnx/node_types.h"
#include "onnx/proto_tensor.h"
#include "onnx/qlinear_ops.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::TypeProto;

// "Conv 'conv1'", or "Conv #3" for an unnamed node (its position in the file).
std::string proto_label(const NodeProto& node, int index) {
  return node.name().empty() ? fmt::format("{} #{}", node.op_type(), index)
                             : fmt::format("{} '{}'", node.op_type(), node.name());
}

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

int64_t default_opset(const ModelProto& model) {
  int64_t opset = -1;
  for (const auto& entry : model.opset_import())
    if (is_default_domain(entry.domain())) opset = entry.version();
  if (opset < 0) fail("the model imports no opset of the default ONNX domain");
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)
    fail("opset {} is not supported (memledger reads opsets {} to {})", opset, kMinOnnxOpset, kMaxOnnxOpset);
  return opset;
}

// Constructs the IR cannot hold, refused by name before anything else looks at them.
void refuse_unsupported(const GraphProto& graph) {
  if (graph.sparse_initializer_size() > 0)
    fail("sparse initializer '{}' is not supported", graph.sparse_initializer(0).values().name());
  for (int i = 0; i < graph.node_size(); ++i) {
    const NodeProto& node = graph.node(i);
    for (const auto& attribute : node.attribute()) {
      using A = onnx::AttributeProto;
      if (attribute.type() == A::GRAPH || attribute.type() == A::GRAPHS || attribute.has_g() || attribute.graphs_size())
        fail("node {}: attribute '{}' is a subgraph (If/Loop/Scan control flow is not supported)", proto_label(node, i),
             attribute.name());
      if (attribute.type() == A::SPARSE_TENSOR || attribute.type() == A::SPARSE_TENSORS)
        fail("node {}: attribute '{}' is a sparse tensor (not supported)", proto_label(node, i), attribute.name());
    }
  }
}

// Checks that every name a node reads is defined somewhere (else: a missing initializer
// or a dangling name) and puts the nodes in an order where each is defined before use
// (Kahn's algorithm, keeping the file's order among ready nodes). A cycle is an Error
// naming a node on it.
void sort_nodes(GraphProto& graph) {
  std::unordered_set<std::string> defined;
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& init : graph.initializer()) defined.insert(init.name());
  std::unordered_map<std::string, int> producer;
  const int n = graph.node_size();
  for (int i = 0; i < n; ++i)
    for (const auto& out : graph.node(i).output()) {
      if (out.empty()) continue;
      if (defined.count(out) || !producer.emplace(out, i).second)
        fail("node {}: output '{}' is already defined elsewhere", proto_label(graph.node(i), i), out);
    }
  std::vector<int> waiting(static_cast<size_t>(n), 0);
  std::unordered_map<std::string, std::vector<int>> readers;
  for (int i = 0; i < n; ++i) {
    const NodeProto& node = graph.node(i);
    std::unordered_set<std::string> seen;
    for (const auto& in : node.input()) {
      if (in.empty() || defined.count(in)) continue;
      if (!producer.count(in))
        fail("node {}: input '{}' is not defined: no graph input, initializer or node output has this name",
             proto_label(node, i), in);
      if (seen.insert(in).second) {
        ++waiting[static_cast<size_t>(i)];
        readers[in].push_back(i);
      }
    }
  }
  for (const auto& out : graph.output())
    if (!defined.count(out.name()) && !producer.count(out.name()))
      fail("graph output '{}' is not defined by any node, graph input or initializer (a dangling name)", out.name());

  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i)
    if (waiting[static_cast<size_t>(i)] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (const auto& out : graph.node(i).output()) {
      const auto it = readers.find(out);
      if (it == readers.end()) continue;
      for (int reader : it->second)
        if (--waiting[static_cast<size_t>(reader)] == 0) ready.push(reader);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (waiting[static_cast<size_t>(i)] == 0) continue;
      const NodeProto& node = graph.node(i);
      for (const auto& in : node.input()) {
        const auto it = producer.find(in);
        if (it != producer.end() && waiting[static_cast<size_t>(it->second)] != 0)
          fail("node {}: input '{}' comes from node {}, which depends on this node's output (a cycle)",
               proto_label(node, i), in, proto_label(graph.node(it->second), it->second));
      }
    }
    fail("the nodes form a cycle");
  }
  bool sorted = true;
  for (int i = 0; i < n; ++i) sorted = sorted && order[static_cast<size_t>(i)] == i;
  if (sorted) return;
  google::protobuf::RepeatedPtrField<NodeProto> nodes;
  nodes.Swap(graph.mutable_node());
  for (int i : order) *graph.add_node() = nodes.Get(i);
}

// Applies --input-shape and checks every graph input has a static shape.
void fix_input_shapes(GraphProto& graph, const ImportOptions& options) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  std::vector<std::string> names;
  for (const auto& input : graph.input())
    if (!initializers.count(input.name())) names.push_back(input.name());
  for (const auto& [name, shape] : options.input_shapes)
    if (std::find(names.begin(), names.end(), name) == names.end())
      fail_option(ErrorOption::kInputShapes, "input shape for '{}': not a graph input (inputs: {})", name,
                  fmt::join(names, ", "));

  for (auto& input : *graph.mutable_input()) {
    if (initializers.count(input.name())) continue;
    const std::string what = "graph input '" + input.name() + "'";
    if (!input.type().has_tensor_type()) fail("{}: only tensor inputs are supported", what);
    auto* tensor_type = input.mutable_type()->mutable_tensor_type();
    const auto it = options.input_shapes.find(input.name());
    if (it != options.input_shapes.end()) {
      const Shape& given = it->second;
      if (tensor_type->has_shape() && tensor_type->shape().dim_size() != static_cast<int>(given.size()))
        fail_option(ErrorOption::kInputShapes, "{}: the input shape gives {} axes but the model declares {}", what,
                    given.size(), tensor_type->shape().dim_size());
      if (tensor_type->has_shape())
        for (int a = 0; a < tensor_type->shape().dim_size(); ++a) {
          const auto& dim = tensor_type->shape().dim(a);
          if (dim.has_dim_value() && dim.dim_value() != given[static_cast<size_t>(a)])
            fail_option(ErrorOption::kInputShapes,
                        "{}: the input shape gives axis {} extent {} but the model declares {}", what, a,
                        given[static_cast<size_t>(a)], dim.dim_value());
        }
      auto* shape = tensor_type->mutable_shape();
      shape->clear_dim();
      for (int64_t d : given) shape->add_dim()->set_dim_value(d);
    }
    if (!tensor_type->has_shape())
      fail_option(ErrorOption::kInputShapes, "{} has no shape; give it an input shape ({}=1x3x224x224)", what,
                  input.name());
    for (int a = 0; a < tensor_type->shape().dim_size(); ++a) {
      const auto& dim = tensor_type->shape().dim(a);
      if (dim.has_dim_value() && dim.dim_value() >= 0) continue;
      fail_option(ErrorOption::kInputShapes, "{}: axis {} has no static extent{}; give it an input shape ({}=...)",
                  what, a, dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : "", input.name());
    }
  }
}

struct ValueType {
  DType dtype;
  Shape shape;
};

// A value's type after shape inference, or an Error naming it (and `where` it comes from).
ValueType static_type(const TypeProto* type, const std::string& name, const std::string& where) {
  if (!type) fail("{}: value '{}' has no type after shape inference", where, name);
  if (!type->has_tensor_type())
    fail("{}: value '{}' is not a tensor (sequences, maps and optionals are not supported)", where, name);
  const auto& tensor_type = type->tensor_type();
  if (tensor_type.elem_type() == TensorProto::STRING)
    fail("{}: value '{}' is a string tensor (not supported)", where, name);
  const auto dtype = dtype_from_onnx_code(tensor_type.elem_type());
  if (!dtype)
    fail("{}: value '{}' has element type {}, which is not supported", where, name,
         TensorProto::DataType_IsValid(tensor_type.elem_type())
             ? TensorProto::DataType_Name(static_cast<TensorProto::DataType>(tensor_type.elem_type()))
             : std::to_string(tensor_type.elem_type()));
  if (!tensor_type.has_shape()) fail("{}: value '{}' has no static shape after shape inference", where, name);
  Shape shape;
  for (const auto& dim : tensor_type.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      fail("{}: value '{}' has no static shape after shape inference (axis {} is {})", where, name, shape.size(),
           dim.has_dim_param() ? "'" + dim.dim_param() + "'" : "unknown");
    shape.push_back(dim.dim_value());
  }
  // The bytes of every value must be countable: a shape whose size overflows is refused here.
  const std::string what = where + ": value '" + name + "' of shape " + shape_to_string(shape);
  checked_mul(element_count(shape, what), host_element_bytes(*dtype), what);
  return {*dtype, std::move(shape)};
}

// A type a shape rule computed, its bytes checked countable.
ValueType checked_type(const TensorType& t, const std::string& name, const std::string& where) {
  const std::string what = where + ": value '" + name + "' of shape " + shape_to_string(t.shape);
  for (int64_t d : t.shape)
    if (d < 0) fail("{} has a negative extent", what);
  checked_mul(element_count(t.shape, what), host_element_bytes(t.dtype), what);
  return {t.dtype, t.shape};
}

// The file may state a value's type (value_info, graph outputs): where it states an element
// type, a rank or an extent, the computed type must agree.
void check_declared_type(const TypeProto& stated, const ValueType& t, const std::string& name,
                         const std::string& label) {
  if (!stated.has_tensor_type()) return;
  const auto& tt = stated.tensor_type();
  auto refuse = [&](const std::string& what) {
    fail("node {}: value '{}' is {}{} but the file states {}", label, name, dtype_name(t.dtype),
         shape_to_string(t.shape), what);
  };
  if (tt.elem_type() != 0 && tt.elem_type() != dtype_onnx_code(t.dtype))
    refuse(fmt::format("element type {}",
                       TensorProto::DataType_IsValid(tt.elem_type())
                           ? TensorProto::DataType_Name(static_cast<TensorProto::DataType>(tt.elem_type()))
                           : std::to_string(tt.elem_type())));
  if (!tt.has_shape()) return;
  if (tt.shape().dim_size() != static_cast<int>(t.shape.size())) refuse(fmt::format("rank {}", tt.shape().dim_size()));
  for (int a = 0; a < tt.shape().dim_size(); ++a) {
    const auto& dim = tt.shape().dim(a);
    if (dim.has_dim_value() && dim.dim_value() != t.shape[static_cast<size_t>(a)])
      refuse(fmt::format("extent {} on axis {}", dim.dim_value(), a));
  }
}

Tensor constant_node_value(const NodeProto& node, const std::string& label) {
  if (node.attribute_size() != 1) fail("node {}: a Constant needs exactly one value attribute", label);
  const auto& a = node.attribute(0);
  const std::string& key = a.name();
  if (key == "value") return onnx_io::tensor_from_proto(a.t(), "node " + label + ": attribute 'value'");
  if (key == "value_float") {
    Tensor t(DType::kFloat32, {});
    t.data<float>()[0] = a.f();
    return t;
  }
  if (key == "value_int") {
    Tensor t(DType::kInt64, {});
    t.data<int64_t>()[0] = a.i();
    return t;
  }
  if (key == "value_floats") {
    Tensor t(DType::kFloat32, {a.floats_size()});
    std::copy(a.floats().begin(), a.floats().end(), t.data<float>().begin());
    return t;
  }
  if (key == "value_ints") {
    Tensor t(DType::kInt64, {a.ints_size()});
    std::copy(a.ints().begin(), a.ints().end(), t.data<int64_t>().begin());
    return t;
  }
  if (key == "value_string" || key == "value_strings")
    fail("node {}: attribute '{}' is a string constant (not supported)", label, key);
  if (key == "sparse_value") fail("node {}: attribute 'sparse_value' is a sparse tensor (not supported)", label);
  fail("node {}: unknown Constant attribute '{}'", label, key);
}

// The tensor of initializer `init`'s raw_data, which parse_mapped_model cut out of the
// protobuf and left at `range` of the mapped file: a view in place where it is aligned to
// the element size, else a heap copy (protobuf puts raw_data at any offset); or nullopt
// after putting the bytes back into raw_data where they cannot serve as they lie (packed
// int4, a size that does not match, other data fields: the ordinary checks then judge the
// tensor).
std::optional<Tensor> in_file_view(TensorProto& init, const onnx_io::MappedModel& m,
                                   std::pair<int64_t, int64_t> range) {
  const std::span<std::byte> bytes = m.file->bytes(range.first, range.second);
  const auto type = dtype_from_onnx_code(init.data_type());
  const bool plain = type && *type != DType::kInt4 && *type != DType::kUInt4 &&
                     init.data_location() != TensorProto::EXTERNAL && init.external_data_size() == 0 &&
                     init.float_data_size() == 0 && init.int32_data_size() == 0 && init.int64_data_size() == 0 &&
                     init.double_data_size() == 0 && init.uint64_data_size() == 0 && init.string_data_size() == 0;
  if (plain) {
    Shape shape(init.dims().begin(), init.dims().end());
    int64_t expected = -1;
    try {
      if (std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; }))
        expected = checked_mul(element_count(shape, "initializer"), host_element_bytes(*type), "initializer");
    } catch (const Error&) {
    }
    if (expected == range.second) {
      if (reinterpret_cast<uintptr_t>(bytes.data()) % static_cast<uintptr_t>(host_element_bytes(*type)) == 0)
        return Tensor::view(*type, std::move(shape), m.file, range.first);
      Tensor copy(*type, std::move(shape));
      m.file->copy_out(bytes, copy.bytes());
      return copy;
    }
  }
  // assign, not set_raw_data(pointer, size): protobuf's SetBytes builds a temporary string
  // and copies it again, two copies of the bytes at once.
  init.mutable_raw_data()->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  m.file->release(bytes);
  return std::nullopt;
}

Graph build_graph(ModelProto& model, const ImportOptions& options, const std::string& model_dir,
                  const onnx_io::MappedModel* in_file = nullptr) {
  const int64_t opset = default_opset(model);
  GraphProto& gp = *model.mutable_graph();
  refuse_unsupported(gp);
  sort_nodes(gp);
  fix_input_shapes(gp, options);

  // Initializers: external data is resolved (bounded, confined to the model's folder) and
  // every tensor's declared size is checked against the bytes present. Weights a mapped
  // file holds in place stay there (onnx/external_data_reader.h, onnx/mapped_model.h): they
  // leave the protobuf, which checker and shape inference see as graph inputs of their
  // type instead. The others are converted (and their protobuf bytes dropped, one at a
  // time) only when the graph is built, so the weights are held once plus the biggest
  // tensor, not twice.
  onnx_io::ExternalData external(model_dir, options.max_external_bytes, options.map_tensors_from);
  std::vector<std::pair<std::string, Tensor>> mapped;
  std::unordered_set<std::string> input_names;
  for (const auto& input : gp.input()) input_names.insert(input.name());
  for (int i = 0, in_file_index = 0; i < gp.initializer_size(); ++in_file_index) {
    TensorProto& init = *gp.mutable_initializer(i);
    std::optional<Tensor> view;
    if (in_file)
      if (const auto it = in_file->raw_data.find(in_file_index); it != in_file->raw_data.end())
        view = in_file_view(init, *in_file, it->second);
    if (!view && init.data_location() == TensorProto::EXTERNAL) view = external.resolve(init);
    if (!view) {
      ++i;
      continue;
    }
    if (!input_names.count(init.name())) {
      auto* type = gp.add_input();
      type->set_name(init.name());
      auto* tensor_type = type->mutable_type()->mutable_tensor_type();
      tensor_type->set_elem_type(init.data_type());
      for (int64_t d : init.dims()) tensor_type->mutable_shape()->add_dim()->set_dim_value(d);
    }
    mapped.emplace_back(init.name(), std::move(*view));
    gp.mutable_initializer()->DeleteSubrange(i, 1);
  }
  std::unordered_set<std::string> constants, mapped_names;
  for (const auto& [name, view] : mapped)
    if (!constants.insert(name).second || !mapped_names.insert(name).second)
      fail("initializer '{}' is given twice", name);
  for (const auto& init : gp.initializer()) {
    onnx_io::check_tensor_proto(init, "initializer '" + init.name() + "'");
    if (!constants.insert(init.name()).second && mapped_names.count(init.name()))
      fail("initializer '{}' is given twice", init.name());
  }
  // Tensor attributes (Constant's value, ConstantOfShape's) are checked the same way before
  // libonnx reads them: a Constant [43] holding one int64 made its inference of a following
  // ConstantOfShape → Expand allocate a rank of 4·10^9 (a fuzzer finding).
  for (const auto& node : gp.node()) {
    const std::string& name = node.name().empty() && node.output_size() > 0 ? node.output(0) : node.name();
    for (const auto& a : node.attribute())
      if (a.type() == onnx::AttributeProto::TENSOR)
        onnx_io::check_tensor_proto(
            a.t(), fmt::format("node '{}' ({}) attribute '{}'", escape_for_terminal(name), node.op_type(), a.name()));
  }

  // Roles the file states (dimension denotations on its inputs, outputs and value_info),
  // read before shape inference, which copies denotations onto values it infers.
  std::unordered_map<std::string, AxisRoles> stated_roles;
  auto state_roles = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    std::vector<std::string> denotations;
    for (const auto& dim : vi.type().tensor_type().shape().dim()) denotations.push_back(dim.denotation());
    if (std::any_of(denotations.begin(), denotations.end(), [](const std::string& d) { return !d.empty(); }))
      stated_roles[vi.name()] = onnx_io::roles_from_denotations(denotations);
  };
  for (const auto& vi : gp.input()) state_roles(vi);
  for (const auto& vi : gp.value_info()) state_roles(vi);
  for (const auto& vi : gp.output()) state_roles(vi);
  auto roles_of = [&](const std::string& name, const Shape& shape) {
    const auto it = stated_roles.find(name);
    return it == stated_roles.end() || it->second.size() != shape.size() ? AxisRoles{} : it->second;
  };

  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    fail("the ONNX checker refuses the model: {}", e.what());
  }
  onnx_io::check_names(gp);

  // Types the file states (value_info, graph outputs): a computed type must agree.
  std::unordered_map<std::string, const TypeProto*> declared;
  for (const auto& vi : gp.value_info()) declared[vi.name()] = &vi.type();
  for (const auto& vi : gp.output()) declared[vi.name()] = &vi.type();
  std::unordered_map<std::string, int64_t> domain_opset;
  for (const auto& entry : model.opset_import()) domain_opset[entry.domain()] = entry.version();

  Graph g;
  g.name = gp.name().empty() ? "main" : gp.name();
  g.opset = opset;
  std::unordered_map<std::string, ValueId> ids;
  for (const auto& input : gp.input()) {
    if (constants.count(input.name())) continue;
    const ValueType t = static_type(&input.type(), input.name(), "graph input");
    ids[input.name()] = g.add_input(
        {.name = input.name(), .dtype = t.dtype, .shape = t.shape, .roles = roles_of(input.name(), t.shape)});
  }
  for (auto& init : *gp.mutable_initializer()) {
    ids[init.name()] =
        g.add_constant(init.name(), onnx_io::tensor_from_proto(init, "initializer '" + init.name() + "'"));
    // Clearing a protobuf field keeps its capacity: swap the storage out to free it.
    std::string().swap(*init.mutable_raw_data());
    google::protobuf::RepeatedField<float>().Swap(init.mutable_float_data());
    google::protobuf::RepeatedField<int32_t>().Swap(init.mutable_int32_data());
    google::protobuf::RepeatedField<int64_t>().Swap(init.mutable_int64_data());
    google::protobuf::RepeatedField<double>().Swap(init.mutable_double_data());
    init.clear_raw_data();
  }
  for (auto& [name, view] : mapped) ids[name] = g.add_constant(name, std::move(view));
  // Values a node's value rule worked out that stay node outputs (empty tensors: known to
  // the nodes after them, but not made constants).
  std::unordered_map<std::string, Tensor> known;

  for (int i = 0; i < gp.node_size(); ++i) {
    const NodeProto& np = gp.node(i);
    const std::string label = proto_label(np, i);
    auto agree = [&](const std::string& name, const ValueType& t) {
      const auto it = declared.find(name);
      if (it != declared.end()) check_declared_type(*it->second, t, name, label);
    };
    if (is_default_domain(np.domain()) && np.op_type() == "Constant") {
      if (np.output_size() != 1 || np.output(0).empty()) fail("node {}: a Constant needs one output", label);
      Tensor value = constant_node_value(np, label);
      agree(np.output(0), {value.dtype(), value.shape()});
      ids[np.output(0)] = g.add_constant(np.output(0), std::move(value));
      continue;
    }
    Node node;
    node.name = np.name();
    node.op = np.op_type();
    node.domain = is_default_domain(np.domain()) ? "" : np.domain();
    for (const auto& attribute : np.attribute())
      node.attributes[attribute.name()] = onnx_io::attribute_from_proto(attribute, label);
    std::vector<std::optional<TensorType>> in_types;
    std::vector<const Tensor*> in_values;
    for (const auto& in : np.input()) {
      node.inputs.push_back(in.empty() ? ValueId{} : ids.at(in));
      if (in.empty()) {
        in_types.emplace_back();
        in_values.push_back(nullptr);
        continue;
      }
      const Value& v = g.value(node.inputs.back());
      in_types.push_back(TensorType{v.dtype, v.shape});
      const auto k = known.find(in);
      in_values.push_back(v.constant ? &*v.constant : k != known.end() ? &k->second : nullptr);
    }
    int last_used = np.output_size() - 1;
    while (last_used >= 0 && np.output(last_used).empty()) --last_used;

    // The op table's shape rule, else libonnx's inference for this node alone.
    const auto domain_it = domain_opset.find(is_default_domain(np.domain()) ? std::string() : np.domain());
    const onnx_io::NodeTyping typing{np, label, domain_it == domain_opset.end() ? opset : domain_it->second, in_types,
                                     in_values};
    const OpRecord* record = find_op(node.domain, node.op, opset);
    std::vector<std::optional<TensorType>> out_types;
    std::optional<Tensor> folded;
    if (record && record->shape) {
      const ShapeInputs rule_inputs{.node = node,
                                    .label = label,
                                    .opset = opset,
                                    .types = in_types,
                                    .values = in_values,
                                    .outputs = static_cast<size_t>(np.output_size()),
                                    .max_bytes = options.max_bytes,
                                    .names = {np.input().begin(), np.input().end()}};
      std::vector<TensorType> types;
      bool stated_only = false;
      try {
        types = record->shape(rule_inputs);
      } catch (const NotStatic& e) {
        // The shape depends on a value only known when the model runs: the file may state it.
        for (int o = 0; o <= last_used; ++o) {
          const auto stated = declared.find(np.output(o));
          try {
            const ValueType t = static_type(stated == declared.end() ? nullptr : stated->second, np.output(o), label);
            types.push_back({t.dtype, t.shape});
          } catch (const Error&) {
            throw NotStatic(fmt::format("{}, and the file states no static shape for '{}'", e.what(), np.output(o)));
          }
        }
        stated_only = true;
      }
      if (static_cast<int>(types.size()) <= last_used)
        fail("node {}: {} outputs are named, but {} has {}", label, last_used + 1, np.op_type(), types.size());
      if (node.domain.empty()) onnx_io::check_types_with_schema(typing, types);
      out_types.assign(types.begin(), types.end());
      if (record->value && np.output_size() == 1 && !stated_only) folded = record->value(rule_inputs);
      if (folded && (folded->dtype() != types[0].dtype || folded->shape() != types[0].shape))
        fail("node {}: its value {}{} does not match its shape rule's {}{}", label, dtype_name(folded->dtype()),
             shape_to_string(folded->shape()), dtype_name(types[0].dtype), shape_to_string(types[0].shape));
    } else {
      out_types = onnx_io::infer_with_libonnx(typing);
    }

    // A value worked out from constants becomes a constant; an empty one stays a node.
    const bool becomes_constant = folded && folded->elements() > 0;
    for (int o = 0; o <= last_used; ++o) {
      const std::string& name = np.output(o);
      if (name.empty()) fail("node {}: output {} is omitted but a later output is used (not supported)", label, o);
      const auto& computed =
          static_cast<size_t>(o) < out_types.size() ? out_types[static_cast<size_t>(o)] : std::optional<TensorType>{};
      const auto stated = declared.find(name);
      const ValueType t = computed
                              ? checked_type(*computed, name, "node " + label)
                              : static_type(stated == declared.end() ? nullptr : stated->second, name, "node " + label);
      agree(name, t);
      if (becomes_constant) {
        ids[name] = g.add_constant(name, std::move(*folded));
        break;
      }
      if (folded) known[name] = *folded;
      const ValueId id =
          g.add_value({.name = name, .dtype = t.dtype, .shape = t.shape, .roles = roles_of(name, t.shape)});
      ids[name] = id;
      node.outputs.push_back(id);
    }
    if (!becomes_constant) g.add_node(std::move(node));
  }
  for (const auto& out : gp.output()) g.mark_output(ids.at(out.name()));

  if (options.fold_quantized) {
    onnx_io::read_qlinear_operators(g);
    onnx_io::fold_qdq(g);
  }
  infer_axis_roles(g, {.inputs_nhwc = options.input_layout_nhwc});
  verify_graph(g);
  return g;
}

}  // namespace

Graph import_onnx_bytes(std::string_view bytes, const ImportOptions& options, const std::string& source,
                        const std::string& model_dir) {
  try {
    if (static_cast<int64_t>(bytes.size()) > options.max_bytes || bytes.size() > static_cast<size_t>(INT32_MAX))
      fail("the file is {} bytes, more than the bound of {}", bytes.size(), options.max_bytes);
    ModelProto model;
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      fail("not an ONNX model: the protobuf does not parse (a truncated or garbled file?)");
    if (!model.has_graph()) fail("not an ONNX model: it has no graph");
    return build_graph(model, options, model_dir);
  } catch (const Error& e) {
    throw e.in_context(source);
  }
}

Graph import_onnx_file(const std::string& path, const ImportOptions& options) {
  check_input_file(path, options.max_bytes);
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  // Parsed straight from the file: no copy of the whole file is held beside the message;
  // a big file is mapped and its weights stay there.
  try {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (!ec && static_cast<int64_t>(size) >= options.map_files_from) {
      onnx_io::MappedModel mapped;
      if (onnx_io::parse_mapped_model(MappedFile::open(path), options.map_tensors_from, mapped)) {
        if (!mapped.model.has_graph()) fail("not an ONNX model: it has no graph");
        return build_graph(mapped.model, options, dir, &mapped);
      }
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read the file");
    ModelProto model;
    if (!model.ParseFromIstream(&in))
      fail("not an ONNX model: the protobuf does not parse (a truncated or garbled file?)");
    if (!model.has_graph()) fail("not an ONNX model: it has no graph");
    return build_graph(model, options, dir);
  } catch (const Error& e) {
    throw e.in_context(path);
  }
}

void add_input_shape(ImportOptions& options, const std::string& text) {
  const auto eq = text.rfind('=');
  auto bad = [&] { fail("'{}': expected NAME=1x3x224x224 with extents > 0", text); };
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) bad();
  Shape shape;
  size_t start = eq + 1;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('x', start), text.size());
    const std::string part = text.substr(start, end - start);
    if (part.empty() || part.size() > 18 || part.find_first_not_of("0123456789") != std::string::npos) bad();
    shape.push_back(std::stoll(part));
    if (shape.back() <= 0) bad();
    start = end + 1;
  }
  const std::string name = text.substr(0, eq);
  if (!options.input_shapes.emplace(name, shape).second)
    fail("'{}': an input shape for '{}' is given twice", text, name);
}

ShapeCrossCheck cross_check_shapes(const std::string& path, const ImportOptions& options) {
  const Graph g = import_onnx_file(path, options);
  std::unordered_map<std::string, std::pair<TensorType, std::string>> ours;
  for (NodeId id : g.order())
    for (ValueId out : g.node(id).outputs)
      ours[g.value(out).name] = {TensorType{g.value(out).dtype, g.value(out).shape}, g.node(id).label()};
  std::unordered_map<std::string, const Tensor*> constant;
  for (size_t i = 0; i < g.value_count(); ++i) {
    const Value& v = g.value(ValueId{static_cast<int32_t>(i)});
    if (v.constant) constant[v.name] = &*v.constant;
  }

  ShapeCrossCheck check;
  try {
    std::ifstream in(path, std::ios::binary);
    ModelProto model;
    if (!model.ParseFromIstream(&in)) fail("not an ONNX model");
    GraphProto& gp = *model.mutable_graph();
    sort_nodes(gp);
    fix_input_shapes(gp, options);
    std::string dir = fs::path(path).parent_path().string();
    // Every external tensor into raw_data (map_from: no tensor is viewed in place): the
    // cross-check hands the file to libonnx whole.
    onnx_io::ExternalData external(dir.empty() ? "." : dir, options.max_external_bytes,
                                   std::numeric_limits<int64_t>::max());
    for (auto& init : *gp.mutable_initializer())
      if (init.data_location() == TensorProto::EXTERNAL) external.resolve(init);
    for (auto& node : *gp.mutable_node()) {
      if (node.op_type() == "Constant" || node.output_size() != 1) continue;
      const auto it = constant.find(node.output(0));
      if (it == constant.end()) continue;
      const std::string output = node.output(0), name = node.name();
      node.Clear();
      node.set_name(name);
      node.set_op_type("Constant");
      node.add_output(output);
      auto* attribute = node.add_attribute();
      attribute->set_name("value");
      attribute->set_type(onnx::AttributeProto::TENSOR);
      *attribute->mutable_t() = onnx_io::tensor_to_proto(*it->second, output);
    }
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true, /*strict=*/1,
                                                                   /*data_propagation=*/true));
    std::unordered_map<std::string, const TypeProto*> theirs;
    for (const auto& vi : gp.value_info()) theirs[vi.name()] = &vi.type();
    for (const auto& vi : gp.output()) theirs[vi.name()] = &vi.type();
    for (const auto& [name, entry] : ours) {
      const auto& [type, label] = entry;
      const auto it = theirs.find(name);
      std::optional<ValueType> t;
      try {
        if (it != theirs.end()) t = static_type(it->second, name, "libonnx");
      } catch (const Error&) {
        t.reset();
      }
      if (!t) {
        ++check.libonnx_unknown;
        continue;
      }
      ++check.compared;
      if (t->dtype != type.dtype || t->shape != type.shape)
        check.disagreements.push_back(fmt::format("value '{}' of {}: table {}{}, libonnx {}{}", name, label,
                                                  dtype_name(type.dtype), shape_to_string(type.shape),
                                                  dtype_name(t->dtype), shape_to_string(t->shape)));
    }
  } catch (const std::exception& e) {
    check.libonnx_error = e.what();
  }
  return check;
}

bool is_known_operator(const Node& node, int64_t opset) {
  if (node.domain == kMemledgerDomain) return find_op(node) != nullptr;
  if (is_default_domain(node.domain)) return onnx::OpSchemaRegistry::Schema(node.op, static_cast<int>(opset), "");
  // Other domains ONNX defines (ai.onnx.ml, ai.onnx.preview.training): the IR does not keep
  // their opset, so ask at their newest version.
  const auto& domains = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto it = domains.find(node.domain);
  return it != domains.end() && onnx::OpSchemaRegistry::Schema(node.op, it->second.second, node.domain) != nullptr;
}

}  // namespace memledger
