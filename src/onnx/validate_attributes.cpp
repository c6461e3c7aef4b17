#include "onnx/validate_attributes.h"

#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/core/text.h"
#include "memledger/ir/op_table.h"

namespace memledger::onnx_io {
namespace {

using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;

// The largest stride, dilation, kernel extent or pad we accept: far beyond any real model,
// small enough that libonnx's output-size arithmetic cannot overflow.
constexpr int64_t kMaxWindowValue = int64_t{1} << 31;
// Slice steps beyond this are clamped to it by no exporter we know; libonnx's arithmetic on
// ±2^63 crashed (SIGSEGV) or looped.
constexpr int64_t kMaxSliceStep = int64_t{1} << 62;
// More constant elements than this are not a shape operand.
constexpr int kMaxOperandElements = 1 << 16;

std::string label(const NodeProto& node, int index) {
  return node.name().empty() ? fmt::format("{} #{}", node.op_type(), index)
                             : fmt::format("{} '{}'", node.op_type(), node.name());
}

bool default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// The integer values of a small INT64 or INT32 tensor, or nothing.
std::optional<std::vector<int64_t>> int_values(const TensorProto& t) {
  int64_t elements = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxOperandElements) return std::nullopt;
    elements *= d;
    if (elements > kMaxOperandElements) return std::nullopt;
  }
  std::vector<int64_t> values;
  if (t.data_type() == TensorProto::INT64) {
    if (t.has_raw_data()) {
      if (t.raw_data().size() != static_cast<size_t>(elements) * 8) return std::nullopt;
      values.resize(static_cast<size_t>(elements));
      if (elements > 0) std::memcpy(values.data(), t.raw_data().data(), t.raw_data().size());
    } else {
      values.assign(t.int64_data().begin(), t.int64_data().end());
    }
  } else if (t.data_type() == TensorProto::INT32) {
    if (t.has_raw_data()) {
      if (t.raw_data().size() != static_cast<size_t>(elements) * 4) return std::nullopt;
      for (int64_t i = 0; i < elements; ++i) {
        int32_t v;
        std::memcpy(&v, t.raw_data().data() + i * 4, 4);
        values.push_back(v);
      }
    } else {
      values.assign(t.int32_data().begin(), t.int32_data().end());
    }
  } else {
    return std::nullopt;
  }
  if (static_cast<int64_t>(values.size()) != elements) return std::nullopt;
  return values;
}

// Constant operands by name: initializers and the outputs of Constant nodes.
class Constants {
 public:
  explicit Constants(const GraphProto& graph) {
    for (const auto& init : graph.initializer()) tensors_[init.name()] = &init;
    for (const auto& node : graph.node()) {
      if (!default_domain(node.domain()) || node.op_type() != "Constant" || node.output_size() != 1) continue;
      for (const auto& a : node.attribute())
        if (a.name() == "value" && a.has_t()) tensors_[node.output(0)] = &a.t();
    }
  }
  const TensorProto* find(const NodeProto& node, int input) const {
    if (input >= node.input_size() || node.input(input).empty()) return nullptr;
    const auto it = tensors_.find(node.input(input));
    return it == tensors_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string, const TensorProto*> tensors_;
};

// libonnx 1.12's shape inference for Conv and pooling indexes the input's spatial axes by
// the weights' rank or kernel_shape without checking them (a fuzzed model with a rank-2
// Conv input crashed it): where the file states the ranks, they are checked first.
void check_window(const GraphProto& graph, const NodeProto& node, const std::string& where,
                  const std::unordered_map<std::string, int>& rank) {
  const OpRecord* record = find_op(node.domain(), node.op_type());
  if (!record || record->window == WindowKind::kNone) return;
  (void)graph;
  for (const auto& a : node.attribute()) {
    const std::string& name = a.name();
    const bool positive = name == "strides" || name == "dilations" || name == "kernel_shape";
    const bool pads = name == "pads" || name == "output_padding";
    if (!positive && !pads && name != "output_shape") continue;
    for (int k = 0; k < a.ints_size(); ++k) {
      const int64_t v = a.ints(k);
      if (positive && v < 1) fail("node {}: {}[{}] is {}; it must be at least 1", where, name, k, v);
      if (!positive && v < 0) fail("node {}: {}[{}] is {}; it must not be negative", where, name, k, v);
      if (v > kMaxWindowValue) fail("node {}: {}[{}] is {}, more than {}", where, name, k, v, kMaxWindowValue);
    }
  }
  auto rank_of = [&](int input) {
    if (input >= node.input_size()) return -1;
    const auto it = rank.find(node.input(input));
    return it == rank.end() ? -1 : it->second;
  };
  const int x = rank_of(0);
  if (x < 0) return;
  if (x < 3)
    fail("node {}: input '{}' has rank {}; {} needs N, C and at least one spatial axis", where, node.input(0), x,
         node.op_type());
  const int w = record->weight_input >= 0 ? rank_of(record->weight_input) : -1;
  if (w >= 0 && w != x) fail("node {}: weights of rank {} for an input of rank {}", where, w, x);
  for (const auto& a : node.attribute()) {
    const int spatial = x - 2;
    if (a.name() == "kernel_shape" && a.ints_size() != spatial)
      fail("node {}: kernel_shape has {} values for {} spatial axes", where, a.ints_size(), spatial);
    if ((a.name() == "strides" || a.name() == "dilations") && a.ints_size() != 0 && a.ints_size() != spatial)
      fail("node {}: {} has {} values for {} spatial axes", where, a.name(), a.ints_size(), spatial);
    if (a.name() == "pads" && a.ints_size() != 0 && a.ints_size() != 2 * spatial)
      fail("node {}: pads has {} values for {} spatial axes (2 per axis)", where, a.ints_size(), spatial);
  }
}

// libonnx's Transpose inference takes perm's length as the output rank unchecked; a Conv
// after it then indexed past the input's axes (a fuzz finding: perm [0,1,2] on rank 4).
void check_transpose(const NodeProto& node, const std::string& where,
                     const std::unordered_map<std::string, int>& rank) {
  if (node.op_type() != "Transpose" || node.input_size() < 1) return;
  const auto it = rank.find(node.input(0));
  for (const auto& a : node.attribute()) {
    if (a.name() != "perm") continue;
    const int n = a.ints_size();
    if (it != rank.end() && n != it->second)
      fail("node {}: perm has {} values for an input of rank {}", where, n, it->second);
    std::vector<char> seen(static_cast<size_t>(n), 0);
    for (int k = 0; k < n; ++k) {
      const int64_t p = a.ints(k);
      if (p < 0 || p >= n || seen[static_cast<size_t>(p)])
        fail("node {}: perm is not a permutation of 0..{}", where, n - 1);
      seen[static_cast<size_t>(p)] = 1;
    }
  }
}

void check_slice(const NodeProto& node, const std::string& where, const Constants& constants) {
  if (node.op_type() != "Slice") return;
  const TensorProto* steps = constants.find(node, 4);
  if (!steps) return;
  const auto values = int_values(*steps);
  if (!values) return;
  for (size_t k = 0; k < values->size(); ++k) {
    const int64_t v = (*values)[k];
    if (v == 0) fail("node {}: steps[{}] is 0", where, k);
    if (v > kMaxSliceStep || v < -kMaxSliceStep)
      fail("node {}: steps[{}] is {}, beyond ±2^62 (no slice needs a step that large)", where, k, v);
  }
}

int64_t onnx_element_bytes(int code) {
  switch (code) {
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
    case TensorProto::UINT64:
      return 8;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::INT16:
    case TensorProto::UINT16:
      return 2;
    default:
      return 1;
  }
}

void check_constant_of_shape(const NodeProto& node, const std::string& where, const Constants& constants,
                             int64_t max_bytes) {
  if (node.op_type() != "ConstantOfShape") return;
  const TensorProto* shape = constants.find(node, 0);
  if (!shape) return;
  const auto values = int_values(*shape);
  if (!values) return;
  int64_t element_bytes = 4;  // float 0 by default
  for (const auto& a : node.attribute())
    if (a.name() == "value" && a.has_t()) element_bytes = onnx_element_bytes(a.t().data_type());
  int64_t bytes = element_bytes;
  for (size_t k = 0; k < values->size(); ++k) {
    const int64_t v = (*values)[k];
    if (v < 0) fail("node {}: input 'shape'[{}] is {}; extents must not be negative", where, k, v);
    int64_t next;
    if (__builtin_mul_overflow(bytes, v, &next) || next > max_bytes)
      fail("node {}: input 'shape' {} makes a tensor of more than {} bytes (the import bound)", where,
           fmt::format("[{}]", fmt::join(*values, ", ")), max_bytes);
    bytes = next;
  }
}

// Names go into JSON reports, which must be UTF-8 (nlohmann throws on anything else).
void check_names(const GraphProto& graph) {
  const auto check = [](const std::string& name, const std::string& what) {
    if (!is_valid_utf8(name)) fail("{} '{}' is not valid UTF-8", what, escape_for_terminal(name));
  };
  check(graph.name(), "the graph name");
  for (const auto& v : graph.input()) check(v.name(), "graph input");
  for (const auto& v : graph.output()) check(v.name(), "graph output");
  for (const auto& v : graph.value_info()) check(v.name(), "value");
  for (const auto& t : graph.initializer()) check(t.name(), "initializer");
  for (int i = 0; i < graph.node_size(); ++i) {
    const NodeProto& node = graph.node(i);
    check(node.name(), "node name");
    check(node.op_type(), "operator");
    for (const auto& n : node.input()) check(n, fmt::format("node #{}: input", i));
    for (const auto& n : node.output()) check(n, fmt::format("node #{}: output", i));
  }
}

}  // namespace

void validate_attributes(const GraphProto& graph, int64_t max_bytes) {
  check_names(graph);
  std::unordered_map<std::string, int> rank;
  auto note = [&](const onnx::ValueInfoProto& vi) {
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      rank[vi.name()] = vi.type().tensor_type().shape().dim_size();
  };
  for (const auto& vi : graph.input()) note(vi);
  for (const auto& vi : graph.value_info()) note(vi);
  for (const auto& init : graph.initializer()) rank[init.name()] = init.dims_size();
  const Constants constants(graph);
  for (int i = 0; i < graph.node_size(); ++i) {
    const NodeProto& node = graph.node(i);
    if (!default_domain(node.domain())) continue;
    const std::string where = label(node, i);
    check_window(graph, node, where, rank);
    check_slice(node, where, constants);
    check_transpose(node, where, rank);
    check_constant_of_shape(node, where, constants, max_bytes);
  }
}

void validate_operand_shapes(const Graph& graph) {
  for (NodeId id : graph.order()) {
    const Node& node = graph.node(id);
    if (!node.domain.empty()) continue;
    const auto shape_of = [&](size_t input) -> const Shape* {
      if (input >= node.inputs.size() || !node.inputs[input].valid()) return nullptr;
      return &graph.value(node.inputs[input]).shape;
    };
    if (node.op == "Conv" && node.outputs.size() == 1) {
      const Shape* w = shape_of(1);
      const Shape* b = shape_of(2);
      if (w && b && !w->empty() && (b->size() != 1 || (*b)[0] != (*w)[0]))
        fail("node {}: bias {} for {} output maps (it needs one value per map, [{}])", node.label(),
             shape_to_string(*b), (*w)[0], (*w)[0]);
    }
    if (node.op == "Gemm" && node.outputs.size() == 1 && node.outputs[0].valid()) {
      const Shape& y = graph.value(node.outputs[0]).shape;
      const Shape* c = shape_of(2);
      if (!c || y.size() != 2) continue;
      // C must broadcast to [M, N] in one direction: each of its trailing axes is 1 or equal.
      bool ok = c->size() <= 2;
      for (size_t k = 0; ok && k < c->size(); ++k) {
        const int64_t extent = (*c)[c->size() - 1 - k], want = y[1 - k];
        ok = extent == 1 || extent == want;
      }
      if (!ok)
        fail("node {}: bias C {} does not broadcast to the output {}", node.label(), shape_to_string(*c),
             shape_to_string(y));
    }
  }
}

}  // namespace memledger::onnx_io
