// The placement algorithms behind one interface, by name (as the CLI and reports name them).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "memledger/plan/allocate/exact.h"
#include "memledger/plan/allocate/problem.h"

namespace memledger::allocate {

enum class Algorithm { kNaive, kGreedy, kExact };

std::string to_string(Algorithm algorithm);
std::optional<Algorithm> parse_algorithm(std::string_view name);

Solution plan(const Problem& problem, Algorithm algorithm, const ExactOptions& exact_options = {});

}  // namespace memledger::allocate
