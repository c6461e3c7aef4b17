#include "memledger/ir/accumulate_pool.h"

#include <fmt/format.h>

#include "memledger/ir/affine.h"

namespace memledger {

bool is_accumulate_pool(const Node& node) { return node.domain == kMemledgerDomain && node.op == kAccumulatePoolOp; }

std::vector<TensorType> accumulate_pool_shape(const ShapeInputs& in) {
  const Shape& x = in.shape(0);
  if (x.size() != 4) in.fail("strip {} has rank {}; AccumulatePool needs N, C, H, W", in.name(0), x.size());
  if (in.type(0).dtype != DType::kFloat32)
    in.fail("strip {} is {}, not float32", in.name(0), dtype_name(in.type(0).dtype));
  const int64_t count = in.node.int_attr("count", 0);
  if (count < 0) in.fail("attribute 'count' is {}", count);
  if (in.has(1)) {
    const TensorType& acc = in.type(1);
    if (acc.dtype != DType::kFloat64 || acc.shape != Shape{x[0], x[1], 1, 1})
      in.fail("the sums {} are {} {}, not float64 {}", in.name(1), dtype_name(acc.dtype), shape_to_string(acc.shape),
              shape_to_string(Shape{x[0], x[1], 1, 1}));
  }
  return {TensorType{.dtype = count > 0 ? DType::kFloat32 : DType::kFloat64, .shape = {x[0], x[1], 1, 1}}};
}

std::string check_accumulate_pool(const Graph& g, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1 || !node.inputs[0].valid())
    return "expects (strip, sums?) and one output";
  const Value& x = g.value(node.inputs[0]);
  const Value& y = g.value(node.outputs[0]);
  if (x.dtype != DType::kFloat32 || x.shape.size() != 4)
    return fmt::format("strip {} {} is not a float32 N, C, H, W tensor", dtype_name(x.dtype), shape_to_string(x.shape));
  const Shape pooled{x.shape[0], x.shape[1], 1, 1};
  if (node.inputs[1].valid()) {
    const Value& acc = g.value(node.inputs[1]);
    if (acc.dtype != DType::kFloat64 || acc.shape != pooled)
      return fmt::format("sums {} {} are not float64 {}", dtype_name(acc.dtype), shape_to_string(acc.shape),
                         shape_to_string(pooled));
  }
  const int64_t count = node.int_attr("count", 0);
  const DType want = count > 0 ? DType::kFloat32 : DType::kFloat64;
  if (count < 0 || y.dtype != want || y.shape != pooled)
    return fmt::format("output {} {} with count {} is not {} {}", dtype_name(y.dtype), shape_to_string(y.shape), count,
                       dtype_name(want), shape_to_string(pooled));
  return {};
}

Node accumulate_pool_node(ValueId strip, ValueId acc, int64_t count, ValueId y, const std::string& name) {
  return {.name = name,
          .op = std::string(kAccumulatePoolOp),
          .domain = std::string(kMemledgerDomain),
          .inputs = {strip, acc},
          .outputs = {y},
          .attributes = {{"count", count}}};
}

}  // namespace memledger
