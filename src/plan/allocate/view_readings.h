// What a decision with slack reads from one view of the problem (views.h) at one capacity, each
// part when a turn first needs it (exact.cpp): the hole candidates of its slack, the problem with
// the holes its buffers' edges give taken as buffers (per reading), that problem joined again
// and read again, and the problem with its slack as filler buffers (per shape). A reading is
// computed once per decision; most decisions need few of them (the first search places most
// problems before any is read).
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <vector>

#include "memledger/plan/allocate/problem.h"
#include "memledger/plan/allocate/slack_fillers.h"
#include "memledger/plan/allocate/stacks.h"

namespace memledger::allocate {

class ViewReadings {
 public:
  // The edge readings (as read, then without the candidates read at one open edge only whose
  // height another candidate reads there too), and the filler shapes (the sweep, then the
  // layers); turns name them by index.
  static constexpr EdgeReading kEdgeReadings[] = {{}, {.ambiguous_open = false}};
  static constexpr FillerShape kFillerShapes[] = {{.seed = 1}, {.seed = 0}};
  static constexpr int kReadings = static_cast<int>(std::size(kEdgeReadings));
  static constexpr int kShapes = static_cast<int>(std::size(kFillerShapes));

  // The view's problem is kept by reference: it must outlive this.
  ViewReadings(const Problem& view, int64_t capacity) : view_(view), capacity_(capacity) {}

  // slack_hole_candidates of the view.
  const std::vector<Buffer>& holes();
  // The view with its edge holes (with_edge_holes, a few rounds) for a reading; nullptr when
  // it takes none. A reading that takes the same holes as an earlier one gives that one's.
  const EdgeHoles* edge(int reading);
  // The first reading whose edge holes are the same as this one's (itself where none is).
  int same_edge_as(int reading);
  // The edge-hole problem of a reading joined again (relays and stacks, holes too) and that
  // problem's own edge holes; nullptr when the reading takes no hole or nothing joins.
  struct Deep {
    Blocks joined;   // the edge-hole problem, joined
    EdgeHoles edge;  // that with its own edge holes (none new: the joined problem as it is)
  };
  const Deep* deep(int reading);
  // The view with its slack as fillers of a shape, when that makes it tight.
  const Problem* filled(int shape);

 private:
  void read_edges();

  const Problem& view_;
  int64_t capacity_;
  std::optional<std::vector<Buffer>> holes_;
  bool edges_read_ = false;
  std::optional<EdgeHoles> edge_[kReadings];
  int same_as_[kReadings] = {};
  bool deep_read_[kReadings] = {};
  std::optional<Deep> deep_[kReadings];
  bool filled_read_[kShapes] = {};
  std::optional<Problem> filled_[kShapes];
};

}  // namespace memledger::allocate
