// A batched matrix product, y[b] = a[b]·b[b] over broadcast batch axes, for where oneDNN 2.6
// has none fit to run: below AVX-512 its matmuls are gemm-based (they pack through malloc,
// behind the plan's back), and a product of two activations, an attention's Q·Kᵀ and
// softmax·V, has no constant weights for the 1×1 convolution that stands in for the others
// (kernels_matmul.cpp). Each batch is the reference kernels' own product (exec/gemm.h, its
// AVX2+FMA clone where the processor has it: near that ISA's peak), the batches split over
// the run's threads, so the bits are the reference kernel's on any number of threads. No
// workspace. Internal to exec/fast.
#pragma once

#include <cstdint>
#include <vector>

namespace memledger::exec::fast {

// Row-major operands of one rank (at least 2): a [..., M, K], b [..., K, N], y [..., M, N],
// each batch axis of a and b either y's or 1.
struct BatchedProduct {
  std::vector<int64_t> a, b, y;
};

// y = a·b over the batches; on the run's threads (fast/parallel.h).
void batched_product(const BatchedProduct& shape, const float* a, const float* b, float* y);

}  // namespace memledger::exec::fast
