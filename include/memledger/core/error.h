// User errors and internal invariants, kept apart (as Halide's user_assert / internal_assert).
// A user error (bad model, bad flag, bad file) is an exception of one type, caught at the
// command-line boundary and turned into an exit code; a broken invariant aborts loudly.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace memledger {

// The process exit codes of DESIGN.md §4.7.
enum class ExitCode : int {
  kOk = 0,
  kBadInput = 2,           // bad input or usage; the message names the file, node or field
  kDoesNotFit = 3,         // the plan does not fit the capacity
  kVerificationFailed = 4  // a verification found different numbers
};

// The library option a refused value came from, for values that reach the library as
// options rather than as text it parses. Library messages name values, never a command-line
// flag (issue 34): a front end that read the option from a flag names the flag by this.
enum class ErrorOption : uint8_t {
  kNone,
  kMemoryLimit,  // ExecOptions::max_memory_bytes
  kInputShapes,  // ImportOptions::input_shapes
};

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, ExitCode code = ExitCode::kBadInput, ErrorOption option = ErrorOption::kNone)
      : std::runtime_error(std::move(message)), code_(code), option_(option) {}
  ExitCode code() const { return code_; }
  ErrorOption option() const { return option_; }
  // The same error with `context` ahead of its message ("model.onnx: ...").
  Error in_context(std::string_view context, std::string_view separator = ": ") const {
    return Error(fmt::format("{}{}{}", context, separator, what()), code_, option_);
  }

 private:
  ExitCode code_;
  ErrorOption option_;
};

// Throws a bad-input Error with a formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// The same, refusing the value of a library option.
template <typename... Args>
[[noreturn]] void fail_option(ErrorOption option, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...), ExitCode::kBadInput, option);
}

[[noreturn]] void internal_failure(const char* file, int line, const char* condition, const std::string& detail);

}  // namespace memledger

// An invariant of the code itself; never used to reject user input.
#define ML_CHECK(cond, ...)                                                                               \
  do {                                                                                                    \
    if (!(cond)) ::memledger::internal_failure(__FILE__, __LINE__, #cond, ::fmt::format("" __VA_ARGS__)); \
  } while (0)
