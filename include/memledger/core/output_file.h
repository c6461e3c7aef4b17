// Writing output files safely: the whole content goes to a temporary file beside the
// target and is renamed over it only when complete, so a failure never leaves a partial
// file; and a command never writes over one of its own inputs.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace memledger {

// Throws Error (exit code 2) when `path` names the same file as one of `inputs`, or when the
// file cannot be written.
void write_output_file(const std::filesystem::path& path, std::string_view content,
                       const std::vector<std::filesystem::path>& inputs = {});

// True when both paths name the same existing file (or the same absolute path).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace memledger
