#include "memledger/core/output_file.h"

#include <fstream>
#include <system_error>

#include "memledger/core/error.h"

namespace memledger {

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec)) return std::filesystem::equivalent(a, b, ec);
  return std::filesystem::absolute(a, ec).lexically_normal() == std::filesystem::absolute(b, ec).lexically_normal();
}

void write_output_file(const std::filesystem::path& path, std::string_view content,
                       const std::vector<std::filesystem::path>& inputs) {
  for (const auto& input : inputs)
    if (same_file(path, input)) fail("{}: refusing to write an output over the input file", path.string());
  std::filesystem::path temporary = path;
  temporary += ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail("{}: cannot write (cannot create {})", path.string(), temporary.string());
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      out.close();
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      fail("{}: write failed", path.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    fail("{}: cannot write: {}", path.string(), ec.message());
  }
}

}  // namespace memledger
