// libFuzzer target for the placement problem CSV (`memledger allocate`'s input): any text
// must parse into a problem or be refused with a memledger::Error naming the line; a parsed
// problem must survive the lower bound and formatting back to CSV.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memledger/core/error.h"
#include "memledger/plan/allocate/csv.h"
#include "memledger/plan/allocate/lower_bound.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const memledger::allocate::Problem problem =
        memledger::allocate::parse_problem_csv(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.csv");
    (void)memledger::allocate::lower_bound(problem);
    memledger::allocate::Solution solution;
    solution.offsets.assign(problem.buffers.size(), 0);
    (void)memledger::allocate::format_solution_csv(problem, solution);
  } catch (const memledger::Error&) {
  }
  return 0;
}
