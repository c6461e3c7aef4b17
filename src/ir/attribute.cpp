#include "memledger/ir/attribute.h"

#include <fmt/format.h>

namespace memledger {

std::string attribute_to_string(const Attribute& attribute) {
  struct Printer {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(float v) const { return fmt::format("{}", v); }
    std::string operator()(const std::string& v) const { return fmt::format("\"{}\"", v); }
    std::string operator()(const std::vector<int64_t>& v) const { return fmt::format("[{}]", fmt::join(v, ",")); }
    std::string operator()(const std::vector<float>& v) const { return fmt::format("[{}]", fmt::join(v, ",")); }
    std::string operator()(const std::vector<std::string>& v) const {
      return fmt::format("[\"{}\"]", fmt::join(v, "\",\""));
    }
    std::string operator()(const Tensor& t) const {
      return fmt::format("tensor {}{}", dtype_name(t.dtype()), shape_to_string(t.shape()));
    }
  };
  return std::visit(Printer{}, attribute);
}

}  // namespace memledger
