// States each value's axis roles (N, C, H, W) from operator semantics and propagates them
// through operators that keep axes, never guessing from sizes (DESIGN.md P2):
//  - Conv, ConvTranspose, pools, BatchNormalization, InstanceNormalization, LRN, ... say
//    their data input and output are N,C,W (rank 3), N,C,H,W (rank 4), N,C,?,H,W (rank 5);
//    their per-channel parameters ([C]: Conv bias, BatchNormalization's four) are C.
//  - per-axis QuantizeLinear / DequantizeLinear say their `axis` is C.
//  - elementwise and other axis-keeping operators (Relu, Pad, Resize, Concat, Slice, ...)
//    carry roles between operands of the output's shape in both directions; an operand
//    that broadcasts takes the roles of the output axes it aligns to (right-aligned), so
//    a [1,C,1,1] scale against an NCHW tensor is N,C,H,W; Transpose permutes them.
// A stated role is never overwritten; an axis no rule reaches stays unknown ('?').
// Conv weights ([M, C/g, kH, kW]) are left unknown: their axes are not an activation's
// N, C, H, W, and how a device orders them is the device's decision.
#pragma once

#include "memledger/ir/graph.h"

namespace memledger {

struct AxisRoleOptions {
  bool inputs_nhwc = false;  // 4-D graph inputs are N,H,W,C (--input-layout NHWC)
};

// Fills the roles of every value in `graph` (existing known roles are kept).
void infer_axis_roles(Graph& graph, const AxisRoleOptions& options = {});

}  // namespace memledger
