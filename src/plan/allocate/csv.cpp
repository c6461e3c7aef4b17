#include "memledger/plan/allocate/csv.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "memledger/core/error.h"
#include "memledger/core/input_file.h"
#include "memledger/core/output_file.h"

namespace memledger::allocate {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// The column names in both of MiniMalloc's spellings: `id,lower,upper,size` (its current form,
// `upper` exclusive) and `buffer,start,end,size` (its older form, which its converter reads and
// writes with `end` inclusive: the last step the buffer is live).
constexpr std::string_view kNames[2][5] = {{"id", "lower", "upper", "size", "offset"},
                                           {"buffer", "start", "end", "size", "offset"}};

bool is_header(const std::vector<std::string_view>& fields) {
  return fields.size() >= 2 && (fields[0] == kNames[0][0] || fields[0] == kNames[1][0]) && !parse_int(fields[1]);
}

// Returns whether the header is the `buffer,start,end` form.
bool check_header(const std::vector<std::string_view>& fields, std::string_view source, int64_t line) {
  for (size_t form = 0; form < 2; ++form) {
    bool same = fields.size() == 4 || fields.size() == 5;
    for (size_t i = 0; same && i < fields.size(); ++i) same = fields[i] == kNames[form][i];
    if (same) return form == 1;
  }
  fail("{}:{}: the header must be 'id,lower,upper,size[,offset]' or 'buffer,start,end,size[,offset]'", source, line);
}

}  // namespace

Problem parse_problem_csv(std::string_view text, std::string_view source) {
  Problem problem;
  std::unordered_map<std::string_view, int64_t> first_line_of;
  size_t columns = 0;      // 4 or 5 once the header or the first row has set it
  bool inclusive = false;  // the `buffer,start,end` header: `end` is the last step, not one past it
  int64_t line_number = 0;
  size_t at = 0;
  while (at < text.size()) {
    const size_t newline = text.find('\n', at);
    const std::string_view line =
        text.substr(at, newline == std::string_view::npos ? std::string_view::npos : newline - at);
    at = newline == std::string_view::npos ? text.size() : newline + 1;
    ++line_number;
    if (trim(line).empty()) continue;
    const std::vector<std::string_view> fields = split_fields(line);
    if (columns == 0 && is_header(fields)) {
      inclusive = check_header(fields, source, line_number);
      columns = fields.size();
      continue;
    }
    if (fields.size() != 4 && fields.size() != 5) {
      fail("{}:{}: expected 4 or 5 fields (id,lower,upper,size[,offset]), found {}", source, line_number,
           fields.size());
    }
    if (columns == 0) columns = fields.size();
    if (fields.size() != columns) {
      fail("{}:{}: expected {} fields like the rows above, found {}", source, line_number, columns, fields.size());
    }
    if (fields[0].empty()) fail("{}:{}: the id is empty", source, line_number);
    auto integer = [&](size_t i, std::string_view name) {
      const std::optional<int64_t> value = parse_int(fields[i]);
      if (!value) fail("{}:{}: {} '{}' is not an integer", source, line_number, name, fields[i]);
      return *value;
    };
    Buffer b;
    b.id = std::string(fields[0]);
    b.lower = integer(1, inclusive ? "start" : "lower");
    b.upper = integer(2, inclusive ? "end" : "upper");
    b.size = integer(3, "size");
    if (b.size < 0) fail("{}:{}: size {} of '{}' is negative", source, line_number, b.size, b.id);
    if (inclusive) {
      if (b.lower > b.upper) {
        fail("{}:{}: start {} of '{}' must not be after end {} (end is inclusive)", source, line_number, b.lower, b.id,
             b.upper);
      }
      const int64_t end = b.upper;
      if (__builtin_add_overflow(end, 1, &b.upper)) {
        fail("{}:{}: end {} of '{}' is the largest 64-bit integer: one past it overflows", source, line_number, end,
             b.id);
      }
    } else if (b.lower >= b.upper) {
      fail("{}:{}: lower {} of '{}' must be less than upper {} (upper is exclusive)", source, line_number, b.lower,
           b.id, b.upper);
    }
    if (columns == 5 && !fields[4].empty()) {
      const int64_t offset = integer(4, "offset");
      int64_t end = 0;
      if (offset < 0) fail("{}:{}: offset {} of '{}' is negative", source, line_number, offset, b.id);
      if (__builtin_add_overflow(offset, b.size, &end)) {
        fail("{}:{}: offset {} + size {} of '{}' overflows 64 bits", source, line_number, offset, b.size, b.id);
      }
      b.fixed_offset = offset;
    }
    const auto [it, inserted] = first_line_of.emplace(fields[0], line_number);
    if (!inserted) fail("{}:{}: duplicate id '{}' (first on line {})", source, line_number, b.id, it->second);
    problem.buffers.push_back(std::move(b));
  }
  try {
    check_problem(problem);
  } catch (const Error& e) {
    fail("{}: {}", source, e.what());
  }
  return problem;
}

Problem read_problem_csv(const std::filesystem::path& path) {
  const std::string text = read_input_file(path.string(), kMaxCsvBytes, "problem");
  return parse_problem_csv(text, path.string());
}

std::string format_solution_csv(const Problem& problem, const Solution& solution) {
  ML_CHECK(solution.offsets.size() == problem.buffers.size());
  std::string out = "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{}\n", b.id, b.lower, b.upper, b.size, solution.offsets[i]);
  }
  return out;
}

void write_solution_csv(const std::filesystem::path& path, const Problem& problem, const Solution& solution) {
  write_output_file(path, format_solution_csv(problem, solution));
}

}  // namespace memledger::allocate
