// What the TFLite tests that run outside references need of a shell: a quoted path, a command
// with its output in a log, a file's text.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>

namespace memledger::testing {

inline std::string sh_quote(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// Runs a shell command, its output into `log`; returns its exit status.
inline int shell(const std::string& command, const std::filesystem::path& log) {
  const int status = std::system((command + " > " + sh_quote(log) + " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace memledger::testing
