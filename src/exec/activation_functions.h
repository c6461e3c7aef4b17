// Activation functions one kernel computes and another reuses: the unary kernels of Sigmoid
// and HardSigmoid, and memledger.SelfGated (ir/self_gated.h), which multiplies x by them and
// must give the bits the Sigmoid / HardSigmoid → Mul pair gives.
#pragma once

#include <algorithm>
#include <cmath>

namespace memledger::exec {

// exp(−x) overflows to inf for very negative x and 1/(1+inf) is 0: no branch needed.
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

inline float hard_sigmoid(float x, float alpha, float beta) { return std::max(0.0f, std::min(1.0f, alpha * x + beta)); }

// HardSigmoid's attribute defaults (ONNX).
inline constexpr float kHardSigmoidAlpha = 0.2f, kHardSigmoidBeta = 0.5f;

}  // namespace memledger::exec
