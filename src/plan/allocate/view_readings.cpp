#include "view_readings.h"

#include <algorithm>
#include <utility>

#include "memledger/plan/allocate/perfect_packing.h"
#include "memledger/plan/allocate/views.h"

namespace memledger::allocate {
namespace {

constexpr int kEdgeRounds = 3;  // rounds of edge holes (slack_fillers.h)

// Whether two edge-hole problems of one view took the same holes (after the view's own buffers).
bool same_holes(const EdgeHoles& x, const EdgeHoles& y, size_t own) {
  const std::vector<Buffer>& a = x.problem.buffers;
  const std::vector<Buffer>& b = y.problem.buffers;
  return a.size() == b.size() &&
         std::equal(a.begin() + own, a.end(), b.begin() + own, [](const Buffer& p, const Buffer& q) {
           return p.lower == q.lower && p.upper == q.upper && p.size == q.size;
         });
}

}  // namespace

const std::vector<Buffer>& ViewReadings::holes() {
  if (!holes_) holes_ = slack_hole_candidates(view_, capacity_);
  return *holes_;
}

void ViewReadings::read_edges() {
  if (edges_read_) return;
  edges_read_ = true;
  const size_t own = view_.buffers.size();
  for (int k = 0; k < kReadings; ++k) {
    edge_[k] = with_edge_holes(view_, capacity_, holes(), kEdgeRounds, kEdgeReadings[k]);
    same_as_[k] = k;
    for (int before = 0; before < k && same_as_[k] == k; ++before) {
      if (same_holes(*edge_[before], *edge_[k], own)) same_as_[k] = same_as_[before];
    }
  }
}

int ViewReadings::same_edge_as(int reading) {
  read_edges();
  return same_as_[reading];
}

const EdgeHoles* ViewReadings::edge(int reading) {
  read_edges();
  const EdgeHoles& e = *edge_[same_as_[reading]];
  return e.problem.buffers.size() > view_.buffers.size() ? &e : nullptr;
}

const ViewReadings::Deep* ViewReadings::deep(int reading) {
  reading = same_edge_as(reading);
  if (!deep_read_[reading]) {
    deep_read_[reading] = true;
    if (const EdgeHoles* e = edge(reading)) {
      Blocks joined = join_relays_and_stacks(e->problem, kViewStackRounds, e->problem.buffers.size());
      if (joined.joins > 0) {
        EdgeHoles again = with_edge_holes(joined.joined, capacity_, slack_hole_candidates(joined.joined, capacity_),
                                          kEdgeRounds, kEdgeReadings[reading]);
        deep_[reading] = Deep{std::move(joined), std::move(again)};
      }
    }
  }
  return deep_[reading] ? &*deep_[reading] : nullptr;
}

const Problem* ViewReadings::filled(int shape) {
  if (!filled_read_[shape]) {
    filled_read_[shape] = true;
    filled_[shape] = with_slack_fillers(view_, capacity_, kFillerShapes[shape]);
    if (filled_[shape] && !is_tight(*filled_[shape], capacity_)) filled_[shape].reset();
  }
  return filled_[shape] ? &*filled_[shape] : nullptr;
}

}  // namespace memledger::allocate
