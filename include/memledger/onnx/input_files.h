// A graph's inputs read from tensor files (.pb or .npy, onnx/tensor_file.h), one file per
// input by name (`run --input NAME=FILE`): every input exactly once, each file's dtype and
// shape the input's, each read bounded by what the input can hold.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "memledger/core/tensor.h"
#include "memledger/ir/graph.h"

namespace memledger {

// `files` maps input names to paths; `before_read(path)` is called before each file is read
// (an output set protects it). An Error names the input without a file, the name that is no
// input, or the file whose tensor does not match.
std::vector<Tensor> read_input_files(const Graph& graph, const std::map<std::string, std::string>& files,
                                     const std::function<void(const std::string&)>& before_read = {});

}  // namespace memledger
