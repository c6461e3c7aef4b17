// Activation functions one kernel computes and another reuses: the unary kernels of Sigmoid
// and HardSigmoid, and memledger.SelfGated (ir/self_gated.h), which multiplies x by them and
// must give the bits the Sigmoid / HardSigmoid → Mul pair gives; and the float function of
// every unary activation node, which the reference kernels compute per element and the
// integer kernels tabulate per code (kernels_quantized_elementwise.cpp), written once.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "memledger/ir/graph.h"

namespace memledger::exec {

// exp(−x) overflows to inf for very negative x and 1/(1+inf) is 0: no branch needed.
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

inline float hard_sigmoid(float x, float alpha, float beta) { return std::max(0.0f, std::min(1.0f, alpha * x + beta)); }

// HardSigmoid's attribute defaults (ONNX).
inline constexpr float kHardSigmoidAlpha = 0.2f, kHardSigmoidBeta = 0.5f;

// The float function of a unary activation node, its attributes read once, applied to a
// span at a time: the loop is compiled per function (inlined, vectorized where it can be), so
// the one indirect call is per tensor, not per element.
struct ActivationParams {
  float alpha = 0, beta = 0;
};
using ActivationLoop = void (*)(const float* x, float* y, int64_t count, ActivationParams p);
struct ActivationFunction {
  ActivationLoop loop = nullptr;
  ActivationParams params;
  explicit operator bool() const { return loop != nullptr; }
  void operator()(const float* x, float* y, int64_t count) const { loop(x, y, count, params); }
  float operator()(float x) const {
    float y = 0;
    loop(&x, &y, 1, params);
    return y;
  }
};

// That function of a unary activation node of the default domain (Relu, Sigmoid, Tanh,
// HardSigmoid, HardSwish, LeakyRelu, Elu, Exp, ...); empty for any other node (Clip, whose
// bounds may be inputs, is its kernels' own).
ActivationFunction activation_function(const Node& n);
// The operators activation_function knows, in the order the reference kernels register them.
const std::vector<std::string_view>& activation_function_ops();

}  // namespace memledger::exec
