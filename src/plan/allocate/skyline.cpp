#include "skyline.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <tuple>

namespace memledger::allocate::skyline {

Sections build_sections(const Problem& problem) {
  Sections s;
  std::vector<int64_t>& steps = s.steps;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    if (b.size == 0) continue;
    s.index.push_back(static_cast<int32_t>(i));
    steps.push_back(b.lower);
    steps.push_back(b.upper);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  s.sections = static_cast<int32_t>(std::max<size_t>(steps.size(), 1) - 1);
  auto section = [&](int64_t step) {
    return static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };
  for (const int32_t i : s.index) {
    const Buffer& b = problem.buffers[i];
    s.size.push_back(b.size);
    s.alignment.push_back(b.alignment);
    s.lo.push_back(section(b.lower));
    s.hi.push_back(section(b.upper));
  }
  return s;
}

Sections mirrored_in_time(const Sections& s) {
  Sections m = s;
  m.steps.clear();  // the forward steps would name the wrong sections
  for (size_t k = 0; k < s.index.size(); ++k) {
    m.lo[k] = s.sections - s.hi[k];
    m.hi[k] = s.sections - s.lo[k];
  }
  return m;
}

Starters build_starters(const Sections& s, Branching branching) {
  Starters st;
  st.order.resize(s.index.size());
  std::iota(st.order.begin(), st.order.end(), 0);
  auto key = [&](int32_t k) {
    return branching == Branching::kSizeFirst ? std::tuple(s.size[k], int64_t{s.hi[k]}, s.alignment[k])
                                              : std::tuple(int64_t{s.hi[k]}, s.size[k], s.alignment[k]);
  };
  std::stable_sort(st.order.begin(), st.order.end(), [&](int32_t a, int32_t b) { return key(a) > key(b); });
  st.lists.resize(s.sections);
  st.twin_before.assign(s.index.size(), -1);
  for (const int32_t k : st.order) {
    std::vector<int32_t>& list = st.lists[s.lo[k]];
    // Identical buffers (same lifetime, size and alignment) sort next to each other.
    if (!list.empty()) {
      const int32_t j = list.back();
      if (s.hi[j] == s.hi[k] && s.size[j] == s.size[k] && s.alignment[j] == s.alignment[k]) st.twin_before[k] = j;
    }
    list.push_back(k);
  }
  return st;
}

int64_t Perturbation::place(int64_t position) {
  if (!active()) return position;
  return position + static_cast<int64_t>(rng_.next() % 16);
}

namespace {
uint64_t luby(uint64_t i) {
  for (uint64_t k = 1;; ++k) {
    if (i == (uint64_t{1} << k) - 1) return uint64_t{1} << (k - 1);
    if (i < (uint64_t{1} << k) - 1) return luby(i - (uint64_t{1} << (k - 1)) + 1);
  }
}
}  // namespace

Round restart_round(uint64_t round, size_t buffers) {
  constexpr std::array<Branching, 4> kBranching = {Branching::kSizeFirst, Branching::kSizeFirst,
                                                   Branching::kLengthFirst, Branching::kLengthFirst};
  const int64_t unit = std::max<int64_t>(8 * static_cast<int64_t>(buffers), 4096);
  return Round{.backward = round % 2 == 1,
               .branching = kBranching[round % 4],
               .seed = round < 4 ? 0 : round,
               .node_limit = unit * static_cast<int64_t>(luby(round + 1))};
}

}  // namespace memledger::allocate::skyline
