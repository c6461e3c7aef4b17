#include "memledger/onnx/export.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "memledger/core/error.h"
#include "memledger/ir/affine.h"
#include "onnx/dimension_denotation.h"
#include "onnx/proto_tensor.h"
#include "onnx/unfold_integer.h"

namespace memledger {
namespace {

namespace fs = std::filesystem;

// IR version 8 is what libonnx 1.12 writes; it reads every opset the importer accepts.
constexpr int64_t kIrVersion = 8;

void set_type(onnx::ValueInfoProto& info, const Value& v) {
  info.set_name(v.name);
  auto* tensor_type = info.mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(dtype_onnx_code(v.dtype));
  auto* shape = tensor_type->mutable_shape();
  const std::vector<std::string> denotations = onnx_io::denotations_from_roles(v.roles);
  for (size_t a = 0; a < v.shape.size(); ++a) {
    auto* dim = shape->add_dim();
    dim->set_dim_value(v.shape[a]);
    if (a < denotations.size() && !denotations[a].empty()) dim->set_denotation(denotations[a]);
  }
}

onnx::NodeProto& add_node(onnx::GraphProto& gp, const std::string& name, const std::string& op,
                          const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  onnx::NodeProto& np = *gp.add_node();
  np.set_name(name);
  np.set_op_type(op);
  for (const auto& in : inputs) np.add_input(in);
  for (const auto& out : outputs) np.add_output(out);
  return np;
}

// `g` holds standard operators only: memledger's own are lowered before (lower_affine).
onnx::ModelProto to_model(const Graph& g) {
  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("memledger");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(g.opset);
  std::set<std::string> other_domains;

  onnx::GraphProto& gp = *model.mutable_graph();
  gp.set_name(g.name);
  auto name_of = [&](ValueId id) { return id.valid() ? g.value(id).name : std::string(); };

  for (ValueId in : g.inputs()) set_type(*gp.add_input(), g.value(in));
  // Every value a live node or the graph refers to: constants become initializers (sorted
  // by name), the rest carry their shapes in value_info.
  std::map<std::string, ValueId> constants;
  std::vector<ValueId> computed;
  std::set<int32_t> seen;
  auto note = [&](ValueId v) {
    if (!v.valid() || !seen.insert(v.index).second) return;
    const Value& value = g.value(v);
    if (value.is_constant())
      constants.emplace(value.name, v);
    else if (!g.is_graph_input(v) && !g.is_graph_output(v))
      computed.push_back(v);
  };
  for (NodeId id : g.order()) {
    for (ValueId in : g.node(id).inputs) note(in);
    for (ValueId out : g.node(id).outputs) note(out);
  }
  for (ValueId out : g.outputs()) note(out);
  for (const auto& [name, v] : constants) *gp.add_initializer() = onnx_io::tensor_to_proto(*g.value(v).constant, name);
  for (ValueId v : computed) set_type(*gp.add_value_info(), g.value(v));
  for (NodeId id : g.order()) {
    const Node& node = g.node(id);
    std::vector<std::string> ins, outs;
    for (ValueId in : node.inputs) ins.push_back(name_of(in));
    for (ValueId out : node.outputs) outs.push_back(name_of(out));
    onnx::NodeProto& np = add_node(gp, node.name, node.op, ins, outs);
    if (!node.domain.empty()) {
      np.set_domain(node.domain);
      other_domains.insert(node.domain);
    }
    for (const auto& [key, attribute] : node.attributes)
      *np.add_attribute() = onnx_io::attribute_to_proto(key, attribute);
  }
  for (ValueId out : g.outputs()) set_type(*gp.add_output(), g.value(out));
  // The IR keeps only the default domain's opset; other domains ONNX knows get their
  // newest version (ai.onnx.ml, ai.onnx.preview.training), unknown ones version 1.
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& domain : other_domains) {
    auto* entry = model.add_opset_import();
    entry->set_domain(domain);
    const auto it = known.find(domain);
    entry->set_version(it == known.end() ? 1 : it->second.second);
  }
  return model;
}

}  // namespace

std::string export_onnx_bytes(const Graph& graph) {
  Graph lowered = graph;
  lower_affine(lowered);
  onnx_io::unfold_integer_operators(lowered);
  const onnx::ModelProto model = to_model(lowered);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    fail("export of graph '{}': the ONNX checker refuses the result: {}", graph.name, e.what());
  }
  const size_t size = model.ByteSizeLong();
  if (size > static_cast<size_t>(INT32_MAX))
    fail("export of graph '{}': {} bytes exceed protobuf's 2 GiB limit", graph.name, size);
  std::string bytes;
  if (!model.SerializeToString(&bytes)) fail("export of graph '{}': serialization failed", graph.name);
  return bytes;
}

void export_onnx_file(const Graph& graph, const std::string& path, const std::string& input_path) {
  std::error_code ec;
  if (!input_path.empty() && fs::exists(path, ec) && fs::equivalent(path, input_path, ec))
    fail("{}: refusing to overwrite the input model", path);
  const std::string bytes = export_onnx_bytes(graph);
  fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path temp = dir / fmt::format(".{}.{}.tmp", target.filename().string(), ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) fail("{}: cannot write to folder '{}'", path, dir.string());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      fail("{}: writing failed", path);
    }
  }
  fs::rename(temp, target, ec);
  if (ec) {
    fs::remove(temp, ec);
    fail("{}: cannot move the written model into place", path);
  }
}

}  // namespace memledger
