// SiLU, y = x·sigmoid(x) = x / (1 + e^-x), as the fast set's own AVX-512 loop. oneDNN 2.6's
// swish (its eltwise and the Conv post-op alike) took 277 µs on one thread for the 1.2 M
// elements of efficientnet_b0's largest SiLU on the AMD EPYC development machine, this loop
// 171 µs (out of place; both warm in cache), and the Conv without the post-op followed by it
// is faster than the Conv with it (docs/benchmarks.md, Execution). e^-x is 2^k·e^r with k an
// integer and |r| ≤ ln 2 / 2, e^r by a degree-6 polynomial (relative error of y under 1e-6
// against double precision), then one division; below x = -86 the result is -0. The same
// code path for every element (the tail of a buffer too, masked), so a result depends on the element's
// value only: a run inside the arena gets the bits the heap run gets.
#pragma once

#include <cstdint>

namespace memledger::exec::fast {

// Whether this CPU runs the loop (AVX-512F); where not, the fast set keeps oneDNN's swish.
bool silu_available();

// y[i] = x[i]·sigmoid(x[i]) for i < n; x == y is allowed (in place). Only where
// silu_available().
void silu(const float* x, float* y, int64_t n);

}  // namespace memledger::exec::fast
