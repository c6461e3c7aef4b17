// SplitMix64: a tiny generator that gives the same sequence on every platform and standard
// library (the <random> distributions do not), so a seed names one generated instance, one
// filler decomposition or one perturbed branching order everywhere. Shared by the
// generators, the slack fillers and the skyline searches' restarts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memledger/core/error.h"

namespace memledger::allocate {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (a negligible modulo bias is fine for test data and search orders).
  int64_t uniform(int64_t lo, int64_t hi) {
    ML_CHECK(lo <= hi);
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // Uniform in [0, n), n > 0.
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

}  // namespace memledger::allocate
