// Shape rules (DESIGN.md §2, the op table): what an operator's outputs are — element type
// and static shape — from its inputs' types, its attributes and, where the shape depends
// on them (Reshape's shape, Slice's starts, Pad's pads, Resize's sizes ...), the values of
// constant inputs. A rule also checks every attribute it reads, so a hostile value is an
// Error naming the node and the field, never a crash or a runaway computation. A record
// may add a value rule: it evaluates the operator on small constant integer tensors, which
// is how shape computations of exporter graphs (Shape → Gather → Concat → Reshape) become
// constants at import.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/core/dtype.h"
#include "memledger/core/shape.h"
#include "memledger/core/tensor.h"
#include "memledger/ir/graph.h"

namespace memledger {

// What a rule throws when the output's shape depends on an input that is not a constant
// (Reshape's shape from a graph input): the importer then takes the output type the file
// states, where it states a static one, and reports this error otherwise.
class NotStatic : public Error {
 public:
  using Error::Error;
};

struct TensorType {
  DType dtype = DType::kFloat32;
  Shape shape;
  bool operator==(const TensorType&) const = default;
};

// What a rule sees of one node before the node is in a graph.
struct ShapeInputs {
  const Node& node;   // operator and attributes (its value ids are not used)
  std::string label;  // "Conv 'conv1'" or "Conv #3", for messages
  int64_t opset = 17;
  std::vector<std::optional<TensorType>> types;  // one per input; empty for an omitted one
  std::vector<const Tensor*> values;             // constant inputs' values, null elsewhere
  size_t outputs = 1;                            // how many outputs the node names
  int64_t max_bytes = int64_t{1} << 40;          // the most bytes a value-made tensor may have
  std::vector<std::string> names;                // the inputs' value names, for messages (may be empty)

  // "'x'" for input i, or "0" where its name is not known.
  std::string name(size_t i) const { return i < names.size() ? "'" + names[i] + "'" : std::to_string(i); }

  size_t count() const { return types.size(); }
  bool has(size_t i) const { return i < types.size() && types[i].has_value(); }
  // Input i's type; an Error naming the node when the input is absent.
  const TensorType& type(size_t i) const;
  const Shape& shape(size_t i) const { return type(i).shape; }
  int64_t rank(size_t i) const { return static_cast<int64_t>(shape(i).size()); }
  // Input i's values as integers when it is a constant of an integer type; nullopt when it
  // is absent; an Error naming `field` when it is present but not constant (the output's
  // shape would not be static).
  std::optional<std::vector<int64_t>> ints(size_t i, std::string_view field) const;
  // The same for a constant of a floating-point type (Resize's scales).
  std::optional<std::vector<double>> floats(size_t i, std::string_view field) const;

  template <typename... Args>
  [[noreturn]] void not_static(fmt::format_string<Args...> format, Args&&... args) const {
    throw NotStatic("node " + label + ": " + fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    throw Error("node " + label + ": " + fmt::format(format, std::forward<Args>(args)...));
  }
};

// Output types, one per output the node names.
using ShapeRule = std::vector<TensorType> (*)(const ShapeInputs&);
// The output's value when every input it reads is a small integer constant; nullopt when
// it cannot say (an input not known, a result too large, arithmetic that would overflow).
using ValueRule = std::optional<Tensor> (*)(const ShapeInputs&);

// Integer constants a value rule evaluates: at most this many elements.
constexpr int64_t kMaxFoldedElements = 1024;

}  // namespace memledger
