// SiLU, y = x·sigmoid(x) = x / (1 + e^-x), as the fast set's own loop, 16 floats at a time on
// AVX-512 and 8 on AVX2 (fast/isa.h). oneDNN 2.6's swish (its eltwise and the Conv post-op
// alike) took 277 µs on one thread for the 1.2 M elements of efficientnet_b0's largest SiLU on
// the AMD EPYC development machine, the AVX-512 loop 171 µs (out of place; both warm in
// cache), and the Conv without the post-op followed by it is faster than the Conv with it
// (docs/benchmarks.md, Execution). e^-x is 2^k·e^r with k an integer and |r| ≤ ln 2 / 2, e^r
// by a degree-6 polynomial (relative error of y under 1e-6 against double precision), then
// one division; below x = -86 the result is -0. Both widths do the same operations in the same
// order (2^k·p is exact in either: k stays within the normal floats), so they give the same
// bits; and the same code path for every element (a buffer's tail too, masked), so a result
// depends on the element's value only: a run inside the arena gets the bits the heap run gets.
#pragma once

#include <cstdint>

#include "exec/fast/isa.h"

namespace memledger::exec::fast {

// Whether the effective ISA runs a loop (AVX2 or AVX-512); where not, the fast set keeps
// oneDNN's swish.
bool silu_available();

// y[i] = x[i]·sigmoid(x[i]) for i < n; x == y is allowed (in place). Only where
// silu_available(). The second form runs the loop of `isa` (kAvx2 or kAvx512, at most what
// the processor has): tests compare the two.
void silu(const float* x, float* y, int64_t n);
void silu(const float* x, float* y, int64_t n, Isa isa);

}  // namespace memledger::exec::fast
