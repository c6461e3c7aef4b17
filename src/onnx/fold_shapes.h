// Folds the small integer computations exporters emit to compute shapes (Shape → Gather →
// Div → Unsqueeze → Concat → Slice/Reshape), so strict shape inference can give every
// value a static shape. libonnx 1.12's data propagation stops at some of these operators
// (Div, for one: torchvision's shufflenet splits channels that way). Private to src/onnx.
#pragma once

#include <onnx/onnx_pb.h>

namespace memledger::onnx_io {

// Replaces every foldable node (all inputs known, integer results of at most 1024
// elements) by a Constant node with the same output, using the shapes already inferred in
// the graph's value_info. Returns how many nodes it folded; the caller reruns shape
// inference and calls again until it returns 0.
int fold_shape_computations(onnx::ModelProto& model);

}  // namespace memledger::onnx_io
