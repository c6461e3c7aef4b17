// The op table's records for TFLite's builtin operators (domain "tflite", the schema's
// BuiltinOperator names), in TFLite's layout: activations NHWC (the reader states N, H, W,
// C on every 4-D activation), CONV_2D filters OHWI, DEPTHWISE_CONV_2D filters 1HWO,
// FULLY_CONNECTED weights [O, I]. Shapes come from the file; the rules here check them.
// What a record says about memory follows what a TFLite runtime allows: RESHAPE and
// SQUEEZE are their input's bytes, elementwise kernels may write over an operand of the
// output's shape and type, no kernel declares a workspace, and SVDF's new state is written
// over its state input (a persistent buffer, tflite-contract.md).
#include "ir/op_table_tflite.h"

#include "ir/tflite_shape_rules.h"

namespace memledger {
namespace {

int64_t elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

bool has_output(const Node& n) { return !n.outputs.empty() && n.outputs[0].valid(); }

// Each output element reads KH · KW · I filter taps (filter OHWI).
int64_t conv_2d_macs(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || !has_output(n)) return 0;
  const Shape& f = g.value(n.inputs[1]).shape;
  return f.size() != 4 ? 0 : elements(g.value(n.outputs[0]).shape) * f[1] * f[2] * f[3];
}

// Each output element reads KH · KW taps of one input channel (filter 1HWO).
int64_t depthwise_macs(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || !has_output(n)) return 0;
  const Shape& f = g.value(n.inputs[1]).shape;
  return f.size() != 4 ? 0 : elements(g.value(n.outputs[0]).shape) * f[1] * f[2];
}

// Each output element is a dot product of I inputs (weights [O, I]).
int64_t fully_connected_macs(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || !has_output(n)) return 0;
  const Shape& w = g.value(n.inputs[1]).shape;
  return w.size() != 2 ? 0 : elements(g.value(n.outputs[0]).shape) * w[1];
}

// Per batch row: every filter's feature dot product (input_size) and its time dot product
// over the memory (memory_size).
int64_t svdf_macs(const Graph& g, const Node& n) {
  if (n.inputs.size() < 3) return 0;
  const Shape& x = g.value(n.inputs[0]).shape;
  const Shape& feature = g.value(n.inputs[1]).shape;
  const Shape& time = g.value(n.inputs[2]).shape;
  if (x.size() != 2 || feature.size() != 2 || time.size() != 2) return 0;
  return x[0] * feature[0] * (feature[1] + time[1]);
}

constexpr std::string_view kDomain = kTfliteDomain;
using R = RoleRule;
using T = TileModel;

OpRecord record(std::string_view name, ShapeRule shape, auto&& edit) {
  OpRecord r{.domain = kDomain, .name = name, .shape = shape};
  edit(r);
  return r;
}
OpRecord record(std::string_view name, ShapeRule shape) {
  return record(name, shape, [](OpRecord&) {});
}

// Elementwise over one operand (the activations): may write over it.
OpRecord unary(std::string_view name) {
  return record(name, tflite_shapes::same_shape, [](OpRecord& r) {
    r.roles = R::kElementwise;
    r.data_inputs = 1;
    r.in_place = InPlaceRule::kElementwise;
    r.in_place_inputs = 1;
    r.tile = T::kElementwise;
  });
}

// ADD, SUB, MUL: broadcasting operands; the output may take either operand of its shape.
OpRecord binary(std::string_view name) {
  return record(name, tflite_shapes::broadcast, [](OpRecord& r) {
    r.roles = R::kElementwise;
    r.broadcasts = true;
    r.in_place = InPlaceRule::kElementwise;
    r.in_place_inputs = 2;
    r.tile = T::kElementwise;
  });
}

OpRecord with_no_in_place(OpRecord r) {
  r.in_place = InPlaceRule::kNone;
  return r;
}

}  // namespace

std::vector<OpRecord> tflite_records() {
  std::vector<OpRecord> t;
  // Windows and matrix products. The sim's tile models and the patch rules read ONNX's
  // attributes and NCHW, so these records name none (the generic tile model, no patches).
  // The fast set runs their int8 forms as exact f32 convolutions (exec/fast/kernels_tflite_conv).
  t.push_back(record("CONV_2D", tflite_shapes::conv_2d, [](OpRecord& r) {
    r.macs = conv_2d_macs;
    r.fast = FastKernel::kTfliteConv;
    r.integer.fast = true;
  }));
  t.push_back(record("DEPTHWISE_CONV_2D", tflite_shapes::depthwise_conv_2d, [](OpRecord& r) {
    r.macs = depthwise_macs;
    r.fast = FastKernel::kTfliteConv;
    r.integer.fast = true;
  }));
  t.push_back(record("FULLY_CONNECTED", tflite_shapes::fully_connected, [](OpRecord& r) {
    r.macs = fully_connected_macs;
    r.fast = FastKernel::kTfliteConv;
    r.integer.fast = true;
  }));
  for (std::string_view op : {"AVERAGE_POOL_2D", "MAX_POOL_2D"}) t.push_back(record(op, tflite_shapes::pool_2d));
  // SVDF's state (input 4) is a persistent buffer; output 1, the new state, is written over it.
  t.push_back(record("SVDF", tflite_shapes::svdf, [](OpRecord& r) {
    r.macs = svdf_macs;
    r.state_input = 4;
    r.state_output = 1;
  }));

  for (std::string_view op : {"ADD", "SUB", "MUL"}) t.push_back(binary(op));
  for (std::string_view op : {"RELU", "RELU6", "RELU_N1_TO_1", "LOGISTIC", "TANH", "HARD_SWISH"})
    t.push_back(unary(op));
  // Requantizing int8 → int8 element by element may write over its input; float ↔ int8
  // changes the element size, which the elementwise rule refuses by itself.
  t.push_back(unary("QUANTIZE"));
  t.push_back(with_no_in_place(unary("DEQUANTIZE")));
  // A row's maximum and sum are read before its outputs are written: not in place.
  t.push_back(with_no_in_place(unary("SOFTMAX")));

  // Reshape-like: the output is the input's bytes when both are stored alike.
  const auto alias = [](OpRecord& r) { r.in_place = InPlaceRule::kAlias; };
  t.push_back(record("RESHAPE", tflite_shapes::reshape, alias));
  t.push_back(record("SQUEEZE", tflite_shapes::squeeze, alias));

  // Same axes, other extents.
  auto same_axes = [](int data_inputs) {
    return [data_inputs](OpRecord& r) {
      r.roles = R::kSameAxes;
      r.data_inputs = data_inputs;
    };
  };
  t.push_back(record("CONCATENATION", tflite_shapes::concatenation, same_axes(-1)));
  t.push_back(record("PAD", tflite_shapes::pad, same_axes(1)));
  t.push_back(record("RESIZE_NEAREST_NEIGHBOR", tflite_shapes::resize_nearest, same_axes(1)));
  // STRIDED_SLICE's masks make its shape the file's to state: no rule.
  t.push_back(record("STRIDED_SLICE", nullptr, same_axes(1)));
  t.push_back(record("TRANSPOSE", tflite_shapes::transpose));
  t.push_back(record("MEAN", tflite_shapes::mean));
  return t;
}

}  // namespace memledger
