// The CSV interchange form of a placement problem, the one public allocation benchmarks
// (MiniMalloc's among them) use: `id,lower,upper,size[,offset]`, one buffer a line, `upper`
// exclusive, an optional header line. MiniMalloc's older header `buffer,start,end,size[,offset]`
// is read as its converter reads it: `end` inclusive (upper = end + 1). A solution is written
// in the first form with the offset column filled in. Parsing is strict: every fault is an Error
// naming the file and the 1-based line.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

// The largest problem file read (the buffers are sized by the file, so the file is bounded).
inline constexpr int64_t kMaxCsvBytes = int64_t{1} << 30;

// `source` names the text in messages (usually the file path).
Problem parse_problem_csv(std::string_view text, std::string_view source);
Problem read_problem_csv(const std::filesystem::path& path);

// With a header line `id,lower,upper,size,offset`.
std::string format_solution_csv(const Problem& problem, const Solution& solution);

// Writes to a temporary file beside `path`, then renames it over `path`, so a failure never
// leaves a partial file.
void write_solution_csv(const std::filesystem::path& path, const Problem& problem, const Solution& solution);

}  // namespace memledger::allocate
