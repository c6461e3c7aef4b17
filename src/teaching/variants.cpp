#include "memledger/teaching/variants.h"

#include "memledger/ir/affine.h"
#include "memledger/teaching/example.h"

namespace memledger::teaching {
namespace {

// Per-channel values a person can recognise: scale 0.5, 0.6, ...; bias 0.00, 0.01, ...
Tensor channel_parameter(const Shape& shape, float first, float step) {
  Tensor t(model_dtype(), shape);
  const Shape x = input_shape();
  const int64_t channels = x[1];
  // The shape is either [1,C,1,1] or the full [N,C,H,W]; the channel index is (i / (H·W)) % C.
  const int64_t plane = shape[2] * shape[3];
  for (int64_t i = 0; i < t.elements(); ++i)
    t.data<float>()[static_cast<size_t>(i)] = first + step * static_cast<float>((i / plane) % channels);
  return t;
}

ValueId add_x(Graph& g) {
  return g.add_input({.name = "x", .dtype = model_dtype(), .shape = input_shape(), .roles = input_roles()});
}

Variant affine_variant(char letter, bool expanded, AffineRule rule, bool donate, bool bypass, std::string title,
                       std::string story) {
  Graph g;
  g.name = std::string("teaching_") + letter;
  const ValueId x = add_x(g);
  const Shape shape = expanded ? input_shape() : Shape{1, input_shape()[1], 1, 1};
  const ValueId scale = g.add_constant("scale", channel_parameter(shape, 0.5f, 0.1f), input_roles());
  const ValueId bias = g.add_constant("bias", channel_parameter(shape, 0.0f, 0.01f), input_roles());
  const ValueId y = add_affine(g, x, scale, bias, rule, "y");
  if (bypass) {
    const ValueId z =
        g.add_value({.name = "z", .dtype = model_dtype(), .shape = input_shape(), .roles = input_roles()});
    g.add_node({.name = "z", .op = "Add", .inputs = {y, x}, .outputs = {z}});
    g.mark_output(z);
  } else {
    g.mark_output(y);
  }
  return {letter, std::move(title), std::move(story), std::move(g), {.donate_inputs = donate, .in_place = true}};
}

}  // namespace

std::vector<Variant> affine_variants() {
  std::vector<Variant> variants;
  variants.push_back(affine_variant('A', true, AffineRule::kHistorical, false, false,
                                    "expanded parameters, historical kernel",
                                    "scale and bias stored at x's shape; the kernel multiplies into a workspace the "
                                    "size of its output"));
  variants.push_back(affine_variant('B', false, AffineRule::kCurrent, false, false, "compact parameters, no workspace",
                                    "scale and bias kept per channel and broadcast by address; no workspace"));
  variants.push_back(affine_variant('C', false, AffineRule::kCurrent, true, false, "B + output written over x",
                                    "x is donated and has no other reader, so y takes x's buffer"));
  variants.push_back(affine_variant('D', false, AffineRule::kCurrent, true, true, "B, but x also feeds a later Add",
                                    "a bypass branch still reads x after the affine, so in-place is refused"));
  return variants;
}

Graph expanded_mul_add_model() {
  Graph g;
  g.name = "teaching_expanded";
  const ValueId x = add_x(g);
  const ValueId scale = g.add_constant("scale", channel_parameter(input_shape(), 0.5f, 0.1f), input_roles());
  const ValueId bias = g.add_constant("bias", channel_parameter(input_shape(), 0.0f, 0.01f), input_roles());
  const ValueId m =
      g.add_value({.name = "scaled", .dtype = model_dtype(), .shape = input_shape(), .roles = input_roles()});
  const ValueId y = g.add_value({.name = "y", .dtype = model_dtype(), .shape = input_shape(), .roles = input_roles()});
  g.add_node({.name = "mul", .op = "Mul", .inputs = {x, scale}, .outputs = {m}});
  g.add_node({.name = "add", .op = "Add", .inputs = {m, bias}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

}  // namespace memledger::teaching
