#include "activation_functions.h"

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
  const char* op;
  ActivationLoop loop;
  // The node's attributes read as alpha and beta, with their ONNX defaults; none: not read.
  const char* alpha_attr = nullptr;
  float alpha = 0;
  const char* beta_attr = nullptr;
  float beta = 0;
};

const Entry kEntries[] = {
    {"Relu", loop_of<relu>},
    {"Sigmoid", loop_of<sigmoid_of>},
    {"Tanh", loop_of<tanh_of>},
    {"HardSigmoid", loop_of<hard_sigmoid_of>, "alpha", kHardSigmoidAlpha, "beta", kHardSigmoidBeta},
    {"HardSwish", loop_of<hard_swish>},
    {"Sqrt", loop_of<sqrt_of>},
    {"Erf", loop_of<erf_of>},
    {"Exp", loop_of<exp_of>},
    {"Log", loop_of<log_of>},
    {"Neg", loop_of<neg>},
    {"Abs", loop_of<abs_of>},
    {"Reciprocal", loop_of<reciprocal>},
    {"Floor", loop_of<floor_of>},
    {"Ceil", loop_of<ceil_of>},
    {"LeakyRelu", loop_of<leaky_relu>, "alpha", 0.01f},
    {"Elu", loop_of<elu>, "alpha", 1.0f},
    {"Softplus", loop_of<softplus>},
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

const std::vector<const char*>& activation_function_ops() {
  static const std::vector<const char*> ops = [] {
    std::vector<const char*> out;
    for (const Entry& e : kEntries) out.push_back(e.op);
    return out;
  }();
  return ops;
}

}  // namespace memledger::exec
