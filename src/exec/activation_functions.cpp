#include "activation_functions.h"

#include "memledger/ir/op_names.h"

namespace memledger::exec {
namespace {

template <float (*F)(float, ActivationParams)>
void loop_of(const float* x, float* y, int64_t count, ActivationParams p) {
  for (int64_t i = 0; i < count; ++i) y[i] = F(x[i], p);
}

// Each activation's element function; alpha and beta from the node where it has them.
float relu(float x, ActivationParams) { return x > 0 ? x : 0.0f; }
float sigmoid_of(float x, ActivationParams) { return sigmoid(x); }
float tanh_of(float x, ActivationParams) { return std::tanh(x); }
float hard_sigmoid_of(float x, ActivationParams p) { return hard_sigmoid(x, p.alpha, p.beta); }
float hard_swish(float x, ActivationParams) { return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f)); }
float sqrt_of(float x, ActivationParams) { return std::sqrt(x); }
float erf_of(float x, ActivationParams) { return std::erf(x); }
float exp_of(float x, ActivationParams) { return std::exp(x); }
float log_of(float x, ActivationParams) { return std::log(x); }
float neg(float x, ActivationParams) { return -x; }
float abs_of(float x, ActivationParams) { return std::fabs(x); }
float reciprocal(float x, ActivationParams) { return 1.0f / x; }
float floor_of(float x, ActivationParams) { return std::floor(x); }
float ceil_of(float x, ActivationParams) { return std::ceil(x); }
float leaky_relu(float x, ActivationParams p) { return x >= 0 ? x : p.alpha * x; }
float elu(float x, ActivationParams p) { return x >= 0 ? x : p.alpha * std::expm1(x); }
float softplus(float x, ActivationParams) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

struct Entry {
  std::string_view op;
  ActivationLoop loop;
  // The node's attributes read as alpha and beta, with their ONNX defaults; none: not read.
  const char* alpha_attr = nullptr;
  float alpha = 0;
  const char* beta_attr = nullptr;
  float beta = 0;
};

const Entry kEntries[] = {
    {op::kRelu, loop_of<relu>},
    {op::kSigmoid, loop_of<sigmoid_of>},
    {op::kTanh, loop_of<tanh_of>},
    {op::kHardSigmoid, loop_of<hard_sigmoid_of>, "alpha", kHardSigmoidAlpha, "beta", kHardSigmoidBeta},
    {op::kHardSwish, loop_of<hard_swish>},
    {op::kSqrt, loop_of<sqrt_of>},
    {op::kErf, loop_of<erf_of>},
    {op::kExp, loop_of<exp_of>},
    {op::kLog, loop_of<log_of>},
    {op::kNeg, loop_of<neg>},
    {op::kAbs, loop_of<abs_of>},
    {op::kReciprocal, loop_of<reciprocal>},
    {op::kFloor, loop_of<floor_of>},
    {op::kCeil, loop_of<ceil_of>},
    {op::kLeakyRelu, loop_of<leaky_relu>, "alpha", 0.01f},
    {op::kElu, loop_of<elu>, "alpha", 1.0f},
    {op::kSoftplus, loop_of<softplus>},
};

}  // namespace

ActivationFunction activation_function(const Node& n) {
  if (!n.domain.empty()) return {};
  for (const Entry& e : kEntries)
    if (n.op == e.op)
      return {.loop = e.loop,
              .params = {.alpha = e.alpha_attr ? n.float_attr(e.alpha_attr, e.alpha) : e.alpha,
                         .beta = e.beta_attr ? n.float_attr(e.beta_attr, e.beta) : e.beta}};
  return {};
}

const std::vector<std::string_view>& activation_function_ops() {
  static const std::vector<std::string_view> ops = [] {
    std::vector<std::string_view> out;
    for (const Entry& e : kEntries) out.push_back(e.op);
    return out;
  }();
  return ops;
}

}  // namespace memledger::exec
