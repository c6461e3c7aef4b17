// Node attributes, the subset of ONNX's attribute kinds the IR carries. Graph-valued
// attributes (If, Loop) are refused at import.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "memledger/core/tensor.h"

namespace memledger {

using Attribute = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                               std::vector<std::string>, Tensor>;

// Sorted by name, so printing and comparing are stable.
using Attributes = std::map<std::string, Attribute>;

// "3", "1.5", "\"SAME_UPPER\"", "[1,1]", "tensor float32[2]"
std::string attribute_to_string(const Attribute& attribute);

}  // namespace memledger
