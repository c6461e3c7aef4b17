// The progress line of the exact placement search (`allocate`, `plan --algorithm exact`):
// the library reports through ExactOptions::on_progress and never prints; the command line
// draws it on stderr when that is a terminal, with the budget as the bar's length.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <memory>

#include "memledger/plan/allocate/exact.h"
#include "terminal/progress.h"

namespace memledger::cli {

// Keep the returned Progress alive while the search runs; destroying it clears the line.
inline std::shared_ptr<Progress> exact_search_progress(double budget_seconds,
                                                       std::function<void(const allocate::ExactProgress&)>& callback) {
  auto progress = std::make_shared<Progress>("exact search", std::llround(budget_seconds * 1000));
  if (!progress->enabled()) return progress;
  callback = [p = progress.get()](const allocate::ExactProgress& e) {
    p->update(std::llround(e.elapsed_seconds * 1000),
              fmt::format("best {} B, bound {} B, {} nodes", e.best_arena, e.lower_bound, e.nodes));
  };
  return progress;
}

}  // namespace memledger::cli
