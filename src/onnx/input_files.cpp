#include "memledger/onnx/input_files.h"

#include <set>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"
#include "memledger/onnx/tensor_file.h"

namespace memledger {

std::vector<Tensor> read_input_files(const Graph& graph, const std::map<std::string, std::string>& files,
                                     const std::function<void(const std::string&)>& before_read) {
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    if (files.count(v.name) == 0)
      fail("input '{}' ({} {}) has no file", v.name, dtype_name(v.dtype), shape_to_string(v.shape));
  }
  if (files.size() > graph.inputs().size()) {  // every input has a file: some name is no input
    std::set<std::string> names;
    std::string listed;
    for (ValueId id : graph.inputs()) {
      names.insert(graph.value(id).name);
      listed += (listed.empty() ? "" : ", ") + graph.value(id).name;
    }
    for (const auto& [name, path] : files)
      if (names.count(name) == 0) fail("'{}': the model has no input of that name (inputs: {})", name, listed);
  }
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    const auto it = files.find(v.name);
    // A file may hold its header and, for .pb, varint-coded integers besides the data.
    const int64_t expected = checked_mul(element_count(v.shape, v.name), host_element_bytes(v.dtype), v.name);
    const int64_t bound = checked_add(checked_mul(expected, 3, v.name), int64_t{1} << 20, v.name);
    if (before_read) before_read(it->second);
    NamedTensor t = read_tensor_file(it->second, bound);
    if (t.tensor.dtype() != v.dtype || t.tensor.shape() != v.shape)
      fail("input '{}': {} holds {} {}, the model expects {} {}", v.name, it->second, dtype_name(t.tensor.dtype()),
           shape_to_string(t.tensor.shape()), dtype_name(v.dtype), shape_to_string(v.shape));
    inputs.push_back(std::move(t.tensor));
  }
  return inputs;
}

}  // namespace memledger
