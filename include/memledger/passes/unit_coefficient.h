// Special cases of affines (DESIGN.md P7): scale exactly 1 becomes a bias Add; scale 1 and
// bias 0 an identity; Mul by 1 and Add of 0 vanish; DequantizeLinear → QuantizeLinear with
// equal parameters is an identity (with different ones it stays: that pair is the
// requantize); Q → DQ after a DQ with the same scale and the same range (int8 zero point z,
// uint8 z + 128) returns its input exactly and goes, leaving one Q → DQ pair. Nothing
// else shortens a Q → DQ → Q → DQ chain: with other scales, rounding twice differs from
// rounding once. With options.approximate_tolerance > 0, scales within it of 1 count as 1.
// Should run after fuse_affine.
#pragma once

#include "memledger/ir/graph.h"
#include "memledger/passes/pass.h"

namespace memledger {

PassResult unit_coefficient(Graph& graph, const PassOptions& options = {});

}  // namespace memledger
