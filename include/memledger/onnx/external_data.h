// The external-data files a model names, found without loading the model: a command
// protects them as inputs (an output over a model's weights file is refused), so the list
// must be known before anything is written, and reading it must not cost a model's load.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace memledger {

// Every file the main graph's initializers name as external data (their `location`,
// relative to the model's folder), each once, in file order. Walks the protobuf's fields
// and skips every payload (raw_data is never read), so it costs a few reads, not the
// model's size. A file that is not a readable regular model gives what was found before
// the trouble, possibly nothing: the import that follows reports the error itself.
std::vector<std::filesystem::path> external_data_files(const std::string& model_path);

}  // namespace memledger
