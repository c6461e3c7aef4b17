// User errors and internal invariants, kept apart (as Halide's user_assert / internal_assert).
// A user error (bad model, bad flag, bad file) is an exception of one type, caught at the
// command-line boundary and turned into an exit code; a broken invariant aborts loudly.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace memledger {

// The process exit codes of DESIGN.md §4.7.
enum class ExitCode : int {
  kOk = 0,
  kBadInput = 2,           // bad input or usage; the message names the file, node or field
  kDoesNotFit = 3,         // the plan does not fit the capacity
  kVerificationFailed = 4  // a verification found different numbers
};

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, ExitCode code = ExitCode::kBadInput)
      : std::runtime_error(std::move(message)), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Throws a bad-input Error with a formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

[[noreturn]] void internal_failure(const char* file, int line, const char* condition, const std::string& detail);

}  // namespace memledger

// An invariant of the code itself; never used to reject user input.
#define ML_CHECK(cond, ...)                                                                               \
  do {                                                                                                    \
    if (!(cond)) ::memledger::internal_failure(__FILE__, __LINE__, #cond, ::fmt::format("" __VA_ARGS__)); \
  } while (0)
